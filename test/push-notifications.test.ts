import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { decryptWithPushKey, pushKeyOf, registerDevice, registration, TestRelay, tokenIdOf } from './support/push-relay';
import { countQueries, createChannel, createMembers, startTestServer, type TestServer } from './support/server';

eachDatabase('encrypted push notifications', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  /** Each registered device's push key, by relay device id. */
  const keys = new Map<number, { userId: number; pushKey: string; pushKeyId: number }>();

  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 20, pushRelayMaxAttempts: 3 } });
    const { owner, admin, member, moderator, guest } = t.cast;
    await createChannel(t, 'general', [owner, admin, member, moderator, guest]);
    // The member has two phones, the admin one; nobody else has any.
    const devices: Array<[UserRow, ReturnType<typeof registration>]> = [
      [member, registration(await registerDevice(t.api, member), { keySeed: 11 })],
      [member, registration(await registerDevice(t.api, member), { keySeed: 12 })],
      [admin, registration(await registerDevice(t.api, admin), { keySeed: 21 })],
    ];
    for (const [user, fields] of devices) {
      const res = await t.api.post('/mobile_push/register', user, fields);
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    }
    await t.ctx.push!.whenIdle();
    const rows = (await t.ctx.db('client_devices').select('user_id', 'id', 'relay_device_id')) as Array<Record<string, number>>;
    for (const [user, fields] of devices) {
      const row = rows.find((r) => Number(r.user_id) === user.id && Number(r.id) === fields.device_id)!;
      keys.set(Number(row.relay_device_id), { userId: user.id, pushKey: fields.push_key, pushKeyId: fields.push_key_id });
    }
  });
  afterAll(async () => {
    await t.close();
    await relay.close();
  });

  /** Sends, waits for the relay traffic it causes, and returns what the relay accepted meanwhile. */
  async function sendAndCollect(sender: UserRow, fields: Record<string, unknown>) {
    const before = relay.delivered().length;
    const res = await t.api.post('/messages', sender, fields);
    expect(res.status).toBe(200);
    await t.ctx.push!.whenIdle();
    return { id: res.body.id as number, delivered: relay.delivered().slice(before) };
  }

  /** Opens every push request of the given relay requests with its device's key. */
  function open(delivered: Array<{ body: Record<string, any> }>) {
    return delivered.flatMap((r) =>
      (r.body.push_requests as Array<{ device_id: number; push_key_id: number; encrypted_data: string }>).map((p) => {
        const device = keys.get(p.device_id);
        expect(device).toBeDefined();
        expect(p.push_key_id).toBe(device!.pushKeyId);
        const payload = decryptWithPushKey(p.encrypted_data, device!.pushKey);
        expect(payload).not.toBeNull();
        return { relayDeviceId: p.device_id, userId: device!.userId, payload: payload! };
      }),
    );
  }

  it('a direct message gives one notification per device of the recipient, which only its key opens', async () => {
    const { owner, member } = t.cast;
    const { id, delivered } = await sendAndCollect(owner, {
      type: 'direct',
      to: JSON.stringify([member.id]),
      content: 'Lunch at **noon**?',
    });
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.body.realm_url).toBe(t.ctx.config.externalUrl);
    const opened = open(delivered);
    expect(opened).toHaveLength(2);
    expect(new Set(opened.map((o) => o.relayDeviceId)).size).toBe(2);
    for (const { userId, payload } of opened) {
      expect(userId).toBe(member.id);
      expect(payload).toEqual({
        type: 'message',
        realm_name: 'Test Organization',
        realm_url: t.ctx.config.externalUrl,
        user_id: member.id,
        message_id: id,
        sender_id: owner.id,
        sender_full_name: 'Test Owner',
        sender_avatar_url: expect.stringMatching(/^https:\/\//),
        time: expect.any(Number),
        content: 'Lunch at noon?',
        recipient_type: 'direct',
        // Every participant, sorted (Zulip since feature level 429): the form the apps parse.
        recipient_user_ids: [owner.id, member.id].sort((a, b) => a - b),
      });
    }
    // The relay cannot open it, nor can another device's key.
    const [first] = delivered[0]!.body.push_requests as Array<{ encrypted_data: string }>;
    const other = [...keys.values()].find((k) => k.userId === t.cast.admin.id)!;
    expect(decryptWithPushKey(first!.encrypted_data, other.pushKey)).toBeNull();
  });

  it('a group direct message notifies each recipient’s devices, with every participant in recipient_user_ids', async () => {
    const { owner, member, admin } = t.cast;
    const { id, delivered } = await sendAndCollect(owner, {
      type: 'direct',
      to: JSON.stringify([member.id, admin.id]),
      content: 'all three',
    });
    const opened = open(delivered);
    expect(opened.map((o) => o.userId).sort()).toEqual([admin.id, member.id, member.id].sort());
    const everyone = [owner.id, member.id, admin.id].sort((a, b) => a - b);
    for (const { payload } of opened) {
      expect(payload).toMatchObject({ message_id: id, recipient_type: 'direct', recipient_user_ids: everyone });
      expect(payload).not.toHaveProperty('pm_users');
    }
  });

  it('a mention in a channel notifies the mentioned user’s devices only', async () => {
    const { owner, member } = t.cast;
    const { id, delivered } = await sendAndCollect(owner, {
      type: 'channel',
      to: 'general',
      topic: 'plans',
      content: 'hello @**Test Member**',
    });
    const opened = open(delivered);
    expect(opened).toHaveLength(2);
    const channel = await t.ctx.db('channels').where({ name: 'general' }).first();
    for (const { userId, payload } of opened) {
      expect(userId).toBe(member.id);
      expect(payload).toMatchObject({
        message_id: id,
        recipient_type: 'channel',
        channel_id: Number(channel!.id),
        channel_name: 'general',
        topic: 'plans',
        content: 'hello @Test Member',
        sender_id: owner.id,
      });
      expect(payload).not.toHaveProperty('recipient_user_ids');
    }
  });

  it('a wildcard mention notifies every subscriber with devices, but not the sender’s own', async () => {
    const { member, admin } = t.cast;
    const { delivered } = await sendAndCollect(member, { type: 'channel', to: 'general', topic: 'plans', content: '@**all** meeting' });
    const opened = open(delivered);
    expect(opened.map((o) => o.userId)).toEqual([admin.id]);
  });

  it('a channel message without a mention notifies nobody', async () => {
    // A topic nobody follows: being mentioned in "plans" made the member follow it
    // (automatically_follow_topics_where_mentioned), and a followed topic notifies.
    const { delivered } = await sendAndCollect(t.cast.owner, {
      type: 'channel',
      to: 'general',
      topic: 'quiet',
      content: 'nothing special',
    });
    expect(delivered).toEqual([]);
    // What makes the absence meaningful: the same channel does notify on a mention.
    const again = await sendAndCollect(t.cast.owner, { type: 'channel', to: 'general', topic: 'quiet', content: '@**Test Admin**' });
    expect(open(again.delivered)).toHaveLength(1);
  });

  it('a direct message to someone without devices sends nothing', async () => {
    const { delivered } = await sendAndCollect(t.cast.member, { type: 'direct', to: JSON.stringify([t.cast.moderator.id]), content: 'hi' });
    expect(delivered).toEqual([]);
  });

  it('a failing relay gets the notification on a retry, while the send answered at once', async () => {
    const { owner, member } = t.cast;
    // A slow and failing relay: the first attempt is answered 500 after 1.5 s.
    relay.script.set(TestRelay.NOTIFY, [500]);
    relay.delays.set(TestRelay.NOTIFY, [1500]);
    const before = relay.to(TestRelay.NOTIFY).length;
    const started = Date.now();
    const res = await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([member.id]), content: 'retry me' });
    const answeredIn = Date.now() - started;
    expect(res.status).toBe(200);
    // The send answered without waiting for the relay's first answer, let alone a retry.
    expect(answeredIn).toBeLessThan(1500);
    expect(
      relay
        .to(TestRelay.NOTIFY)
        .slice(before)
        .filter((r) => r.status === 200),
    ).toEqual([]);
    expect(await t.ctx.db('messages').where({ id: res.body.id }).first()).toMatchObject({ content: 'retry me' });
    await t.ctx.push!.whenIdle();
    const attempts = relay.to(TestRelay.NOTIFY).slice(before);
    expect(attempts.map((r) => r.status)).toEqual([500, 200]);
    const opened = open([attempts[1]!]);
    expect(opened.map((o) => o.payload.message_id)).toEqual([res.body.id, res.body.id]);
  });

  it('gives up after the configured attempts without touching the message', async () => {
    relay.script.set(TestRelay.NOTIFY, [500, 502, 503, 500]);
    const before = relay.to(TestRelay.NOTIFY).length;
    const res = await t.api.post('/messages', t.cast.owner, {
      type: 'direct',
      to: JSON.stringify([t.cast.admin.id]),
      content: 'lost push',
    });
    expect(res.status).toBe(200);
    await t.ctx.push!.whenIdle();
    expect(
      relay
        .to(TestRelay.NOTIFY)
        .slice(before)
        .map((r) => r.status),
    ).toEqual([500, 502, 503]);
    relay.script.delete(TestRelay.NOTIFY);
    const read = await t.api.get(`/messages/${res.body.id}`, t.cast.admin);
    expect(read.body.message.content).toContain('lost push');
  });

  it('splits a mention of many users into relay requests of at most 200 users', async () => {
    const crowd = await createMembers(t, 'crowd', 201);
    await createChannel(t, 'crowded', [t.cast.owner, ...crowd]);
    // Fixture: confirmed devices written directly, as registrations and relay answers would.
    await t.ctx.db('client_devices').insert(
      crowd.map((u, i) => ({
        user_id: u.id,
        push_key_id: 5,
        push_key: pushKeyOf(200),
        token_kind: 'fcm',
        token_id: tokenIdOf(`crowd-${i}`),
        bouncer_public_key: 'a2V5',
        encrypted_push_registration: 'cmVn',
        relay_device_id: 50_000 + i,
        confirmed_token_id: tokenIdOf(`crowd-${i}`),
        date_created: 0,
      })),
    );
    for (const u of crowd) t.ctx.push!.noteDevice(u.id);
    const { id, delivered } = await sendAndCollect(t.cast.owner, { type: 'channel', to: 'crowded', topic: 't', content: '@**all** hello' });
    // Requests run concurrently: their order of arrival is not fixed.
    expect(delivered.map((r) => r.body.push_requests.length).sort((a, b) => a - b)).toEqual([1, 200]);
    const notified = delivered.flatMap((r) =>
      (r.body.push_requests as Array<{ encrypted_data: string }>).map((p) => decryptWithPushKey(p.encrypted_data, pushKeyOf(200))!),
    );
    expect(new Set(notified.map((p) => p.user_id))).toEqual(new Set(crowd.map((u) => u.id)));
    expect(new Set(notified.map((p) => p.message_id))).toEqual(new Set([id]));
  });

  it('adds no statement to a send whose receivers have no devices', async () => {
    const { owner, moderator, guest } = t.cast;
    const send = () => t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([moderator.id, guest.id]), content: 'quiet' });
    // The missed-message decision also follows a direct message, after commit, at a moment of its
    // own: off, so both counts hold the send's statements alone.
    t.ctx.missedMessages.stop();
    await send();
    const withRelay = await countQueries(t, send);
    t.ctx.push!.stop();
    const withoutRelay = await countQueries(t, send);
    expect(withRelay.queries).toBe(withoutRelay.queries);
    expect(withRelay.queries).toBeGreaterThan(0);
  });
});
