import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register, sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { registerDevice, registration, TestRelay } from './support/push-relay';
import { createChannel, startTestServer, type TestServer } from './support/server';
import { freshUser, userOfAnotherRealm } from './users-fixtures';

const USER_MUTED = 350;
const USER_UNMUTED = 351;
const READ = 1;

eachDatabase('muted users', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(async () => {
    await stopEventsServer(t);
  });
  beforeEach(async () => {
    await t.ctx.db('muted_users').delete();
    // Raw SQL: the harness empties the caches (test/support/server.ts), as `cache flush` would.
    t.ctx.caches.apply({ kind: 'all' });
  });

  const mute = (who: UserRow, id: number) => t.api.post(`/users/me/muted_users/${id}`, who);
  const unmute = (who: UserRow, id: number) => t.api.delete(`/users/me/muted_users/${id}`, who);
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  const rowsOf = async (userId: number) =>
    (await t.ctx.db('muted_users').where({ user_id: userId }).orderBy('id').select('muted_user_id', 'date_muted')).map((r) => ({
      muted_user_id: Number(r.muted_user_id),
      date_muted: Number(r.date_muted),
    }));
  const flagsOf = async (messageId: number, userId: number) =>
    Number((await t.ctx.db('user_messages').where({ message_id: messageId, user_id: userId }).first('flags'))!.flags);
  const isRead = async (messageId: number, userId: number) => ((await flagsOf(messageId, userId)) & READ) !== 0;
  const auditRows = async (eventType: number, userId: number) =>
    (await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: eventType, modified_user_id: userId }).orderBy('id')).map(
      (r) => ({
        actor: Number(r.acting_user_id),
        modified: Number(r.modified_user_id),
        extra: JSON.parse(String(r.extra_data)),
      }),
    );
  const withoutIds = (events: Array<Record<string, any>>) => events.map(({ id: _, ...e }) => e);

  describe('POST /users/me/muted_users/{muted_user_id}', () => {
    it('stores the mute, sends the whole list to every client of the caller and no one else, and writes USER_MUTED', async () => {
      const { member, owner, admin } = t.cast;
      const phone = await register(t, member, { event_types: ['muted_users'] });
      const laptop = await register(t, member, { event_types: ['muted_users'] });
      const other = await register(t, owner, { event_types: ['muted_users'] });
      const before = Math.floor(Date.now() / 1000);
      const res = await mute(member, owner.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      const rows = await rowsOf(member.id);
      expect(rows).toEqual([{ muted_user_id: owner.id, date_muted: expect.any(Number) }]);
      const at = rows[0]!.date_muted;
      expect(at).toBeGreaterThanOrEqual(before);
      for (const c of [phone, laptop]) {
        expect(withoutIds(await pending(t, c))).toEqual([{ type: 'muted_users', muted_users: [{ id: owner.id, timestamp: at }] }]);
      }
      // A second mute: the event lists both, in the order they were muted.
      expect((await mute(member, admin.id)).status).toBe(200);
      const second = (await rowsOf(member.id))[1]!.date_muted;
      expect(withoutIds(await pending(t, phone))).toEqual([
        {
          type: 'muted_users',
          muted_users: [
            { id: owner.id, timestamp: at },
            { id: admin.id, timestamp: second },
          ],
        },
      ]);
      expect(await pending(t, other)).toEqual([]);
      expect((await auditRows(USER_MUTED, member.id)).slice(-2)).toEqual(
        expect.arrayContaining([
          { actor: member.id, modified: member.id, extra: { muted_user_id: owner.id } },
          { actor: member.id, modified: member.id, extra: { muted_user_id: admin.id } },
        ]),
      );
      // POST /register reports the list.
      const fresh = await register(t, member, { fetch_event_types: ['muted_users'] });
      expect(fresh.state.muted_users).toEqual([
        { id: owner.id, timestamp: at },
        { id: admin.id, timestamp: second },
      ]);
    });

    it.each(['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const)('%s may mute a user', async (role) => {
      const who = t.cast[role];
      const target = role === 'member' ? t.cast.owner : t.cast.member;
      expect((await mute(who, target.id)).status).toBe(200);
      expect((await rowsOf(who.id)).map((r) => r.muted_user_id)).toEqual([target.id]);
    });

    it('bots and deactivated users may be muted (bots since feature level 188)', async () => {
      const { member, bot, deactivated } = t.cast;
      expect((await mute(member, bot.id)).status).toBe(200);
      expect((await mute(member, deactivated.id)).status).toBe(200);
      expect((await rowsOf(member.id)).map((r) => r.muted_user_id)).toEqual([bot.id, deactivated.id]);
    });

    it("refuses oneself, unknown IDs, other organizations' users and a second mute, changing nothing", async () => {
      const { member, owner } = t.cast;
      const stranger = await userOfAnotherRealm(t, `muteother${dialect}`);
      const c = await register(t, member, { event_types: ['muted_users', 'update_message_flags'] });
      expect((await mute(member, member.id)).body).toEqual(refusal('Cannot mute self'));
      for (const id of [999999, stranger.id]) {
        const res = await mute(member, id);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(refusal('No such user'));
      }
      expect(await rowsOf(member.id)).toEqual([]);
      expect((await mute(member, owner.id)).status).toBe(200);
      await pending(t, c);
      const audited = (await auditRows(USER_MUTED, member.id)).length;
      const res = await mute(member, owner.id);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('User already muted'));
      expect((await rowsOf(member.id)).map((r) => r.muted_user_id)).toEqual([owner.id]);
      expect(await pending(t, c)).toEqual([]);
      expect(await auditRows(USER_MUTED, member.id)).toHaveLength(audited);
    });

    it('a guest whom can_access_all_users_group limits may mute only people they may know about', async () => {
      const { guest, member } = t.cast;
      const loner = await freshUser(t);
      const membersGroup = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id');
      const everyone = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:everyone' }).first('id');
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: membersGroup!.id });
      t.ctx.caches.apply({ kind: 'all' });
      try {
        expect((await mute(guest, loner.id)).body).toEqual(refusal('Insufficient permission'));
        expect((await unmute(guest, loner.id)).body).toEqual(refusal('Insufficient permission'));
        // Someone sharing #general with the guest, and any bot, may be muted.
        expect((await mute(guest, member.id)).status).toBe(200);
        expect((await mute(guest, t.cast.bot.id)).status).toBe(200);
      } finally {
        await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: everyone!.id });
        t.ctx.caches.apply({ kind: 'all' });
      }
      expect((await mute(guest, loner.id)).status).toBe(200);
    });

    it("marks the caller's unread messages from that user read, with update_message_flags before muted_users", async () => {
      const { member, moderator, admin } = t.cast;
      const fromModerator = [
        await sendToChannel(t, moderator, 'general', 'mute', 'one'),
        await sendDirect(t, moderator, [member], 'two'),
        await sendDirect(t, moderator, [member, admin], 'three'),
      ];
      const alreadyRead = await sendToChannel(t, moderator, 'general', 'mute', 'four');
      await t.api.post('/messages/flags', member, { messages: [alreadyRead], op: 'add', flag: 'read' });
      const fromAdmin = await sendToChannel(t, admin, 'general', 'mute', 'five');
      const c = await register(t, member, { event_types: ['muted_users', 'update_message_flags'] });
      expect((await mute(member, moderator.id)).status).toBe(200);
      const events = withoutIds(await pending(t, c));
      expect(events).toEqual([
        { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: fromModerator, all: false },
        { type: 'muted_users', muted_users: [{ id: moderator.id, timestamp: expect.any(Number) }] },
      ]);
      for (const id of [...fromModerator, alreadyRead]) expect(await isRead(id, member.id)).toBe(true);
      expect(await isRead(fromAdmin, member.id)).toBe(false);
      // Other receivers keep their flags.
      expect(await isRead(fromModerator[2]!, admin.id)).toBe(false);
      const state = await register(t, member, { fetch_event_types: ['message', 'update_message_flags'] });
      const unreadIds = (state.state.unread_msgs.streams as Array<{ unread_message_ids: number[] }>).flatMap((s) => s.unread_message_ids);
      expect(unreadIds).toContain(fromAdmin);
      for (const id of fromModerator) expect(unreadIds).not.toContain(id);
    });

    it('with nothing unread from them, sends muted_users alone', async () => {
      const { member, bot } = t.cast;
      const c = await register(t, member, { event_types: ['muted_users', 'update_message_flags'] });
      expect((await mute(member, bot.id)).status).toBe(200);
      expect((await pending(t, c)).map((e) => e.type)).toEqual(['muted_users']);
    });
  });

  describe('DELETE /users/me/muted_users/{muted_user_id}', () => {
    it('removes the mute, sends the remaining list and writes USER_UNMUTED; messages stay read', async () => {
      const { member, owner, admin } = t.cast;
      await mute(member, owner.id);
      await mute(member, admin.id);
      const fromOwner = await sendDirect(t, owner, [member], 'while muted');
      const c = await register(t, member, { event_types: ['muted_users', 'update_message_flags'] });
      const res = await unmute(member, owner.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect((await rowsOf(member.id)).map((r) => r.muted_user_id)).toEqual([admin.id]);
      expect(withoutIds(await pending(t, c))).toEqual([
        { type: 'muted_users', muted_users: [{ id: admin.id, timestamp: expect.any(Number) }] },
      ]);
      expect(await isRead(fromOwner, member.id)).toBe(true);
      expect((await auditRows(USER_UNMUTED, member.id)).slice(-1)).toEqual([
        { actor: member.id, modified: member.id, extra: { unmuted_user_id: owner.id } },
      ]);
      expect((await unmute(member, admin.id)).status).toBe(200);
      expect(withoutIds(await pending(t, c))).toEqual([{ type: 'muted_users', muted_users: [] }]);
    });

    it('refuses a user not muted (oneself included), unknown IDs and other organizations’ users', async () => {
      const { member, owner } = t.cast;
      const stranger = await userOfAnotherRealm(t, `unmuteother${dialect}`);
      const audited = (await auditRows(USER_UNMUTED, member.id)).length;
      expect((await unmute(member, owner.id)).body).toEqual(refusal('User is not muted'));
      expect((await unmute(member, member.id)).body).toEqual(refusal('User is not muted'));
      for (const id of [999999, stranger.id]) expect((await unmute(member, id)).body).toEqual(refusal('No such user'));
      // Someone else's mute is not the caller's.
      await mute(t.cast.admin, owner.id);
      expect((await unmute(member, owner.id)).body).toEqual(refusal('User is not muted'));
      expect(await auditRows(USER_UNMUTED, member.id)).toHaveLength(audited);
    });
  });

  describe('read receipts', () => {
    it('leave out the users who muted the caller and the users the caller muted', async () => {
      const { member, moderator, admin, owner } = t.cast;
      const id = await sendToChannel(t, owner, 'general', 'receipts', 'who read this?');
      for (const who of [member, moderator, admin]) {
        await t.api.post('/messages/flags', who, { messages: [id], op: 'add', flag: 'read' });
      }
      const readers = async (who: UserRow) => (await t.api.get(`/messages/${id}/read_receipts`, who)).body.user_ids as number[];
      expect(await readers(owner)).toEqual([admin.id, moderator.id, member.id].sort((a, b) => a - b));
      // The member muted the admin; the moderator muted the member.
      await mute(member, admin.id);
      await mute(moderator, member.id);
      // The member sees neither the admin (muted by them) nor the moderator (who muted them); oneself stays.
      expect(await readers(member)).toEqual([member.id]);
      // The owner is in neither relation and sees everyone; the admin, muted by the member, loses the member.
      expect(await readers(owner)).toEqual([admin.id, moderator.id, member.id].sort((a, b) => a - b));
      expect(await readers(admin)).toEqual([admin.id, moderator.id].sort((a, b) => a - b));
    });
  });

  describe('sending', () => {
    it('a muted sender’s channel messages, direct messages and group direct messages arrive read for the muter alone', async () => {
      const { member, moderator, admin, owner } = t.cast;
      // The sender's muters are cached after the first send: muting must reach the cache.
      await sendToChannel(t, moderator, 'general', 'warm', 'before the mute');
      await mute(member, moderator.id);
      const c = await register(t, member, { event_types: ['message'] });
      const sent = [
        await sendToChannel(t, moderator, 'general', 'muted', 'channel'),
        await sendDirect(t, moderator, [member], 'direct'),
        await sendDirect(t, moderator, [member, admin], 'group'),
        await sendToChannel(t, moderator, 'general', 'muted', 'hello @**Test Member**'),
      ];
      for (const id of sent) expect(await isRead(id, member.id)).toBe(true);
      // Others, and the sender's own copy, are as without the mute.
      expect(await isRead(sent[0]!, admin.id)).toBe(false);
      expect(await isRead(sent[2]!, admin.id)).toBe(false);
      expect(await isRead(sent[0]!, owner.id)).toBe(false);
      const events = await pending(t, c);
      expect(events.map((e) => e.message.id)).toEqual(sent);
      for (const e of events) expect(e.flags).toContain('read');
      expect(events[3]!.flags).toEqual(expect.arrayContaining(['read', 'mentioned']));
      // GET /messages reports the same flags.
      const page = await t.api.get('/messages', member, { anchor: sent[0], num_before: 0, num_after: 10, narrow: JSON.stringify([]) });
      for (const m of page.body.messages as Array<{ id: number; flags: string[] }>) {
        if (sent.includes(m.id)) expect(m.flags).toContain('read');
      }
      // Messages from someone else stay unread.
      const fromAdmin = await sendToChannel(t, admin, 'general', 'muted', 'not muted');
      expect(await isRead(fromAdmin, member.id)).toBe(false);
      // Unmuting: the next message is unread again.
      await unmute(member, moderator.id);
      const after = await sendDirect(t, moderator, [member], 'unmuted');
      expect(await isRead(after, member.id)).toBe(false);
    });

    it('the same for messages the server sends (the Notification Bot)', async () => {
      const { member, admin, owner } = t.cast;
      const notices = await createChannel(t, `notices-${dialect}`, [owner]);
      const subscribe = () =>
        t.api.post('/users/me/subscriptions', admin, {
          subscriptions: JSON.stringify([{ name: `notices-${dialect}` }]),
          principals: JSON.stringify([member.id]),
        });
      expect((await subscribe()).status).toBe(200);
      const bot = await t.ctx.db('users').where({ realm_id: t.realmId, email: 'notification-bot@parley.invalid' }).first('id');
      expect(bot).toBeDefined();
      await t.api.delete('/users/me/subscriptions', member, { subscriptions: JSON.stringify([`notices-${dialect}`]) });
      expect((await mute(member, Number(bot!.id))).status).toBe(200);
      expect((await subscribe()).status).toBe(200);
      const newest = await t.ctx
        .db('messages')
        .where({ sender_id: Number(bot!.id) })
        .orderBy('id', 'desc')
        .first('id');
      expect(await isRead(Number(newest!.id), member.id)).toBe(true);
      expect(notices.id).toBeGreaterThan(0);
    });
  });
});

eachDatabase('muted users and push notifications', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 20, pushRelayMaxAttempts: 3 } });
    const { owner, admin, member } = t.cast;
    await createChannel(t, 'general', [owner, admin, member]);
    const res = await t.api.post('/mobile_push/register', member, registration(await registerDevice(t.api, member), { keySeed: 31 }));
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    await t.ctx.push!.whenIdle();
  });
  afterAll(async () => {
    await t.close();
    await relay.close();
  });

  /** How many notification requests a send causes. */
  async function notificationsOf(sender: UserRow, fields: Record<string, unknown>): Promise<number> {
    // Muting reads the muted sender's messages, which sends the phones a removal: not counted here.
    await t.ctx.push!.whenIdle();
    const before = relay.delivered().length;
    const res = await t.api.post('/messages', sender, fields);
    expect(res.status).toBe(200);
    await t.ctx.push!.whenIdle();
    return relay
      .delivered()
      .slice(before)
      .filter((r) => r.path.endsWith('/notify')).length;
  }

  it('a muted sender’s direct messages and mentions never notify the muter; others’ still do, and unmuting restores them', async () => {
    const { owner, admin, member } = t.cast;
    const dm = (from: UserRow) => notificationsOf(from, { type: 'direct', to: JSON.stringify([member.id]), content: 'ping' });
    const mention = (from: UserRow) =>
      notificationsOf(from, { type: 'channel', to: 'general', topic: 'push', content: 'hi @**Test Member**' });
    expect(await dm(owner)).toBe(1);
    expect((await t.api.post(`/users/me/muted_users/${owner.id}`, member)).status).toBe(200);
    expect(await dm(owner)).toBe(0);
    expect(await mention(owner)).toBe(0);
    expect(await notificationsOf(owner, { type: 'direct', to: JSON.stringify([member.id, admin.id]), content: 'group' })).toBe(0);
    expect(await dm(admin)).toBe(1);
    expect(await mention(admin)).toBe(1);
    expect((await t.api.delete(`/users/me/muted_users/${owner.id}`, member)).status).toBe(200);
    expect(await dm(owner)).toBe(1);
  });
});
