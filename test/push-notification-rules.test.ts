import type { UserRow } from '../src/queries/rows';
import { ManualClock } from './support/clock';
import { eachDatabase } from './support/databases';
import { register } from './support/events';
import { decryptWithPushKey, registerDevice, registration, TestRelay } from './support/push-relay';
import { createChannel, startTestServer, type TestServer } from './support/server';

/**
 * Who gets a mobile notification, setting by setting (Zulip's rules in
 * src/domain/push-triggers.ts): one receiver with a phone, the member; each
 * row sets their personal settings, their subscription's overrides and
 * their policy for the topic, sends one message, and says whether the
 * member's phone hears of it.
 */

/** The personal settings that decide a push, at Zulip's defaults; each row overrides some. */
const DEFAULTS = {
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_stream_push_notifications: false,
  wildcard_mentions_notify: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_wildcard_mentions_notify: true,
};

type Send = 'direct' | 'mention' | 'group mention' | 'plain' | 'channel wildcard' | 'topic wildcard';

interface Row {
  send: Send;
  settings?: Partial<typeof DEFAULTS>;
  /** The member's subscription: is_muted and the push_notifications / wildcard_mentions_notify overrides. */
  sub?: { is_muted?: boolean; push_notifications?: boolean; wildcard_mentions_notify?: boolean };
  /** The member's policy for the topic: 1 muted, 2 unmuted, 3 followed. */
  topic?: 1 | 2 | 3;
  /** The member wrote in the topic before (a topic wildcard mention reaches participants only). */
  participant?: boolean;
  notified: boolean;
}

const TABLE: Array<[string, Row]> = [
  ['a direct message', { send: 'direct', notified: true }],
  ['a direct message, offline push off', { send: 'direct', settings: { enable_offline_push_notifications: false }, notified: false }],
  ['a personal mention', { send: 'mention', notified: true }],
  ['a personal mention, offline push off', { send: 'mention', settings: { enable_offline_push_notifications: false }, notified: false }],
  ['a personal mention in a muted channel', { send: 'mention', sub: { is_muted: true }, notified: true }],
  ['a personal mention in a muted topic', { send: 'mention', topic: 1, notified: true }],
  ['a group mention', { send: 'group mention', notified: true }],
  ['a plain channel message', { send: 'plain', notified: false }],
  [
    'a plain message, channel push on for all channels',
    { send: 'plain', settings: { enable_stream_push_notifications: true }, notified: true },
  ],
  [
    'a plain message, on for all channels but off for this one',
    { send: 'plain', settings: { enable_stream_push_notifications: true }, sub: { push_notifications: false }, notified: false },
  ],
  ['a plain message, off for all channels but on for this one', { send: 'plain', sub: { push_notifications: true }, notified: true }],
  [
    'a plain message, on for this channel, which is muted',
    { send: 'plain', sub: { push_notifications: true, is_muted: true }, notified: false },
  ],
  [
    'a plain message, on for this muted channel, topic unmuted',
    { send: 'plain', sub: { push_notifications: true, is_muted: true }, topic: 2, notified: true },
  ],
  ['a plain message, on for this channel, topic muted', { send: 'plain', sub: { push_notifications: true }, topic: 1, notified: false }],
  ['a plain message in a followed topic', { send: 'plain', topic: 3, notified: true }],
  [
    'a plain message in a followed topic, followed-topic push off',
    { send: 'plain', topic: 3, settings: { enable_followed_topic_push_notifications: false }, notified: false },
  ],
  ['a plain message in a followed topic of a muted channel', { send: 'plain', topic: 3, sub: { is_muted: true }, notified: true }],
  ['a channel wildcard mention', { send: 'channel wildcard', notified: true }],
  [
    'a channel wildcard mention, wildcard notifications off',
    { send: 'channel wildcard', settings: { wildcard_mentions_notify: false }, notified: false },
  ],
  [
    'a channel wildcard mention, off for all channels but on for this one',
    { send: 'channel wildcard', settings: { wildcard_mentions_notify: false }, sub: { wildcard_mentions_notify: true }, notified: true },
  ],
  ['a channel wildcard mention in a muted channel', { send: 'channel wildcard', sub: { is_muted: true }, notified: false }],
  [
    'a channel wildcard mention in a followed topic, wildcard notifications off',
    {
      send: 'channel wildcard',
      topic: 3,
      settings: { wildcard_mentions_notify: false, enable_followed_topic_push_notifications: false },
      notified: true,
    },
  ],
  [
    'a channel wildcard mention in a followed topic, both wildcard settings off',
    {
      send: 'channel wildcard',
      topic: 3,
      settings: {
        wildcard_mentions_notify: false,
        enable_followed_topic_wildcard_mentions_notify: false,
        enable_followed_topic_push_notifications: false,
      },
      notified: false,
    },
  ],
  [
    'a channel wildcard mention, offline push off',
    { send: 'channel wildcard', settings: { enable_offline_push_notifications: false }, notified: false },
  ],
  ['a topic wildcard mention to a participant', { send: 'topic wildcard', participant: true, notified: true }],
  ['a topic wildcard mention to a non-participant', { send: 'topic wildcard', notified: false }],
  [
    'a topic wildcard mention to a participant, wildcard notifications off',
    { send: 'topic wildcard', participant: true, settings: { wildcard_mentions_notify: false }, notified: false },
  ],
];

eachDatabase('push notification rules', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  let clock: ManualClock;
  /** The member's phone's push key. */
  let pushKey: string;
  let opsGroupId: number;

  beforeAll(async () => {
    relay = await new TestRelay().start();
    clock = new ManualClock();
    t = await startTestServer(dialect, undefined, {
      clock,
      config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 20, pushRelayMaxAttempts: 3 },
    });
    const { member, owner } = t.cast;
    const fields = registration(await registerDevice(t.api, member), { keySeed: 31 });
    pushKey = fields.push_key;
    expect((await t.api.post('/mobile_push/register', member, fields)).status).toBe(200);
    await t.ctx.push!.whenIdle();
    const group = await t.api.post('/user_groups/create', owner, {
      name: 'ops',
      description: 'operations',
      members: JSON.stringify([member.id, owner.id]),
    });
    expect(group.status).toBe(200);
    opsGroupId = group.body.group_id;
  });
  afterAll(async () => {
    await t.close();
    await relay.close();
  });

  /** The message ids the member's phone was told of since `before` (a relay request count). */
  function notifiedSince(before: number): number[] {
    return relay
      .delivered()
      .slice(before)
      .flatMap((r) => (r.body.push_requests as Array<{ encrypted_data: string }>).map((p) => decryptWithPushKey(p.encrypted_data, pushKey)))
      .filter((p): p is Record<string, any> => p !== null && p.user_id === t.cast.member.id)
      .map((p) => p.message_id as number);
  }

  async function send(sender: UserRow, fields: Record<string, unknown>): Promise<number> {
    const res = await t.api.post('/messages', sender, fields);
    expect(res.status).toBe(200);
    return res.body.id as number;
  }

  async function setMemberSettings(settings: Partial<typeof DEFAULTS>) {
    const body = Object.fromEntries(Object.entries({ ...DEFAULTS, ...settings }).map(([k, v]) => [k, JSON.stringify(v)]));
    expect((await t.api.patch('/settings', t.cast.member, body)).status).toBe(200);
  }

  let n = 0;
  it.each(TABLE)('%s', async (_name, row) => {
    const { owner, member } = t.cast;
    await setMemberSettings(row.settings ?? {});
    const channel = `rules-${++n}`;
    const topic = 'the topic';
    if (row.send !== 'direct') {
      const { id } = await createChannel(t, channel, [owner, member, t.cast.admin]);
      const subscriptionData = Object.entries(row.sub ?? {}).map(([property, value]) => ({ stream_id: id, property, value }));
      if (subscriptionData.length) {
        const res = await t.api.post('/users/me/subscriptions/properties', member, { subscription_data: JSON.stringify(subscriptionData) });
        expect(res.status).toBe(200);
      }
      if (row.participant) {
        await send(owner, { type: 'channel', to: channel, topic, content: 'opening' });
        await send(member, { type: 'channel', to: channel, topic, content: 'joining in' });
      }
      if (row.topic !== undefined) {
        const res = await t.api.post('/user_topics', member, { stream_id: id, topic, visibility_policy: row.topic });
        expect(res.status).toBe(200);
      }
    }
    await t.ctx.push!.whenIdle();
    const before = relay.delivered().length;
    const content = {
      direct: 'a word in private',
      mention: 'hello @**Test Member**',
      'group mention': 'hello @*ops*',
      plain: 'nothing special',
      'channel wildcard': '@**all** listen',
      'topic wildcard': '@**topic** listen',
    }[row.send];
    const id =
      row.send === 'direct'
        ? await send(owner, { type: 'direct', to: JSON.stringify([member.id]), content })
        : await send(owner, { type: 'channel', to: channel, topic, content });
    await t.ctx.push!.whenIdle();
    expect(notifiedSince(before)).toEqual(row.notified ? [id] : []);
  });

  it('a notification a group mention caused names the group; one a personal mention caused does not', async () => {
    const { owner, member } = t.cast;
    await setMemberSettings({});
    await createChannel(t, 'groups-named', [owner, member]);
    const payloads = async (content: string) => {
      const before = relay.delivered().length;
      await send(owner, { type: 'channel', to: 'groups-named', topic: `t ${content.length}`, content });
      await t.ctx.push!.whenIdle();
      return relay
        .delivered()
        .slice(before)
        .flatMap((r) =>
          (r.body.push_requests as Array<{ encrypted_data: string }>).map((p) => decryptWithPushKey(p.encrypted_data, pushKey)!),
        );
    };
    const [byGroup] = await payloads('over to @*ops*');
    expect(byGroup).toMatchObject({ type: 'message', mentioned_user_group_id: opsGroupId, mentioned_user_group_name: 'ops' });
    const [both] = await payloads('over to @*ops* and @**Test Member**');
    expect(both).toMatchObject({ type: 'message' });
    expect(both).not.toHaveProperty('mentioned_user_group_id');
    expect(both).not.toHaveProperty('mentioned_user_group_name');
  });

  it('a message from a muted sender never notifies; the same from another does', async () => {
    const { member, admin, moderator } = t.cast;
    await setMemberSettings({});
    expect((await t.api.post(`/users/me/muted_users/${admin.id}`, member)).status).toBe(200);
    const before = relay.delivered().length;
    await send(admin, { type: 'direct', to: JSON.stringify([member.id]), content: 'muted me' });
    const heard = await send(moderator, { type: 'direct', to: JSON.stringify([member.id]), content: 'not muted' });
    await t.ctx.push!.whenIdle();
    expect(notifiedSince(before)).toEqual([heard]);
    expect((await t.api.delete(`/users/me/muted_users/${admin.id}`, member)).status).toBe(200);
  });

  describe('while the member is online, with online push off', () => {
    const dm = () => send(t.cast.owner, { type: 'direct', to: JSON.stringify([t.cast.member.id]), content: `ping ${Date.now()}` });
    const activeNow = async () => {
      expect((await t.api.post('/users/me/presence', t.cast.member, { status: 'active' })).status).toBe(200);
    };

    beforeAll(async () => {
      await setMemberSettings({ enable_online_push_notifications: false });
    });

    it('a member with an open queue and recent activity is not notified; after 140 s without activity they are', async () => {
      const client = await register(t, t.cast.member);
      await activeNow();
      let before = relay.delivered().length;
      await dm();
      await t.ctx.push!.whenIdle();
      expect(notifiedSince(before)).toEqual([]);
      // Presence last reported long ago (fixture: the time of the member's last report).
      await t.ctx
        .db('user_presence')
        .where({ user_id: t.cast.member.id })
        .update({ last_active_time: Math.floor(Date.now() / 1000) - 141 });
      before = relay.delivered().length;
      const idleId = await dm();
      await t.ctx.push!.whenIdle();
      expect(notifiedSince(before)).toEqual([idleId]);
      await t.api.delete('/events', t.cast.member, { queue_id: client.queueId });
    });

    it('recent activity without a queue taking messages is away: notified', async () => {
      const typingOnly = await register(t, t.cast.member, { event_types: JSON.stringify(['typing']) });
      await activeNow();
      const before = relay.delivered().length;
      const id = await dm();
      await t.ctx.push!.whenIdle();
      expect(notifiedSince(before)).toEqual([id]);
      await t.api.delete('/events', t.cast.member, { queue_id: typingOnly.queueId });
    });

    it('the member’s online push setting on: notified while present', async () => {
      await setMemberSettings({ enable_online_push_notifications: true });
      const client = await register(t, t.cast.member);
      await activeNow();
      const before = relay.delivered().length;
      const id = await dm();
      await t.ctx.push!.whenIdle();
      expect(notifiedSince(before)).toEqual([id]);
      await t.api.delete('/events', t.cast.member, { queue_id: client.queueId });
      await setMemberSettings({ enable_online_push_notifications: false });
    });

    it('what was held back is notified when the queue expires unpolled, if still unread', async () => {
      const client = await register(t, t.cast.member);
      await activeNow();
      const before = relay.delivered().length;
      const unread = await dm();
      const readMeanwhile = await dm();
      await t.ctx.push!.whenIdle();
      expect(notifiedSince(before)).toEqual([]);
      const flags = await t.api.post('/messages/flags', t.cast.member, {
        messages: JSON.stringify([readMeanwhile]),
        op: 'add',
        flag: 'read',
      });
      expect(flags.status).toBe(200);
      // The client stops polling; its queue expires.
      clock.advance(t.ctx.queues.limits.idleTimeoutMs + 1);
      expect(t.ctx.queues.collectGarbage()).toBeGreaterThanOrEqual(1);
      await t.ctx.push!.whenIdle();
      expect(notifiedSince(before)).toEqual([unread]);
      expect((await t.api.get('/events', t.cast.member, { queue_id: client.queueId, last_event_id: -1, dont_block: true })).status).toBe(
        400,
      );
    });

    it('what the client polled before its queue expired is not notified again', async () => {
      const client = await register(t, t.cast.member);
      await activeNow();
      const before = relay.delivered().length;
      await dm();
      await t.ctx.push!.whenIdle();
      const polled = await t.api.get('/events', t.cast.member, {
        queue_id: client.queueId,
        last_event_id: client.lastEventId,
        dont_block: true,
      });
      const last = (polled.body.events as Array<{ id: number }>).at(-1)!.id;
      // The next poll acknowledges what the first returned; then the client goes away.
      await t.api.get('/events', t.cast.member, { queue_id: client.queueId, last_event_id: last, dont_block: true });
      clock.advance(t.ctx.queues.limits.idleTimeoutMs + 1);
      t.ctx.queues.collectGarbage();
      await t.ctx.push!.whenIdle();
      expect(notifiedSince(before)).toEqual([]);
    });
  });
});
