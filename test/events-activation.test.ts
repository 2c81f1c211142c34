import { Role } from '../src/domain/roles';
import { eachDatabase } from './support/databases';
import { Client, pending, register, sendDirect, startEventsServer, stopEventsServer } from './support/events';
import { subscribe, TestServer } from './support/server';
import { freshUser } from './users-fixtures';

const EVENT_TYPES = ['realm_user', 'subscription', 'user_group', 'realm_bot'];

/** What each queue hears when an account is deactivated and reactivated, through GET /events (checked against the contract). */
eachDatabase('deactivation and reactivation events', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  let membersGroup: number;
  let everyoneGroup: number;
  beforeAll(async () => {
    ({ t, general, secret } = await startEventsServer(dialect));
    const ids = async (name: string) => Number((await t.ctx.db('user_groups').where({ realm_id: t.realmId, name }).first('id'))!.id);
    membersGroup = await ids('role:members');
    everyoneGroup = await ids('role:everyone');
  });
  afterAll(() => stopEventsServer(t));

  const listen = (user: Parameters<typeof register>[1]) => register(t, user, { event_types: EVENT_TYPES });
  const summary = async (c: Client) =>
    (await pending(t, c)).map((e) => {
      const { id: _id, ...rest } = e;
      return rest;
    });
  const groupsOf = async (userId: number) =>
    (
      await t.ctx
        .db('group_members as gm')
        .join('user_groups as g', 'g.id', 'gm.group_id')
        .where('gm.user_id', userId)
        .whereNotNull('g.name')
        .orderBy('g.id')
        .pluck('g.id')
    ).map(Number);

  it('tells everyone of a deactivation, and each channel audience of the subscriptions it ends', async () => {
    const u = await freshUser(t);
    await subscribe(t, general, [u]);
    await subscribe(t, secret, [u]);
    const [member, admin] = [await listen(t.cast.member), await listen(t.cast.admin)];
    expect((await t.api.delete(`/users/${u.id}`, t.cast.owner)).status).toBe(200);

    const deactivated = { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: false } };
    // A member sees #general's subscribers, not #secret's.
    expect(await summary(member)).toEqual([
      { type: 'subscription', op: 'peer_remove', stream_ids: [general.id], user_ids: [u.id] },
      deactivated,
    ]);
    const forAdmin = await summary(admin);
    expect(
      forAdmin
        .filter((e) => e.op === 'peer_remove')
        .flatMap((e) => e.stream_ids)
        .sort(),
    ).toEqual([general.id, secret.id].sort());
    expect(forAdmin[forAdmin.length - 1]).toEqual(deactivated);

    // Reactivation: the update, the channels back, the groups back.
    const groups = await groupsOf(u.id);
    expect(groups).toContain(membersGroup);
    expect((await t.api.post(`/users/${u.id}/reactivate`, t.cast.owner)).status).toBe(200);
    expect(await summary(member)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: true } },
      { type: 'subscription', op: 'peer_add', stream_ids: [general.id], user_ids: [u.id] },
      ...groups.map((g) => ({ type: 'user_group', op: 'add_members', group_id: g, user_ids: [u.id] })),
    ]);
    const register_ = await register(t, t.cast.member, { fetch_event_types: ['subscription'], include_subscribers: true });
    const generalNow = register_.state.subscriptions.find((s: { stream_id: number }) => s.stream_id === general.id);
    expect(generalNow.subscribers).toContain(u.id);
  });

  it('tells of bots deactivated with their owner, and of their return, with realm_user updates alone (feature level 474)', async () => {
    const owner = await freshUser(t);
    const bot = await freshUser(t, { isBot: true, botOwnerId: owner.id });
    const [admin, member] = [await listen(t.cast.admin), await listen(t.cast.member)];
    expect((await t.api.delete(`/users/${owner.id}`, t.cast.owner)).status).toBe(200);
    const forAdmin = await summary(admin);
    expect(forAdmin.filter((e) => e.type === 'realm_user').map((e) => e.person)).toEqual([
      { user_id: bot.id, is_active: false },
      { user_id: owner.id, is_active: false },
    ]);
    expect(forAdmin.filter((e) => e.type === 'realm_bot')).toEqual([]);
    expect((await summary(member)).filter((e) => e.type === 'realm_bot')).toEqual([]);

    expect((await t.api.post(`/users/${bot.id}/reactivate`, t.cast.admin)).status).toBe(200);
    const back = await summary(admin);
    expect(back.filter((e) => e.type === 'realm_user').map((e) => e.person)).toEqual([{ user_id: bot.id, is_active: true }]);
    expect(back.filter((e) => e.type === 'realm_bot')).toEqual([]);
  });

  describe('in an organization that limits guests', () => {
    beforeAll(async () => {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: membersGroup });
    });
    afterAll(async () => {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: everyoneGroup });
    });

    it('removes the account from guests who knew it only through a channel', async () => {
      const u = await freshUser(t);
      await subscribe(t, general, [u]);
      // A second guest knows u through a conversation, which outlasts the account.
      const pen = await freshUser(t, { role: Role.GUEST });
      await sendDirect(t, u, [pen], 'hello');
      const guestState = await register(t, t.cast.guest, { fetch_event_types: ['realm_user'] });
      expect(guestState.state.realm_users.map((p: { user_id: number }) => p.user_id)).toContain(u.id);
      const [guest, penPal, member] = [await listen(t.cast.guest), await listen(pen), await listen(t.cast.member)];
      const groups = await groupsOf(u.id);

      expect((await t.api.delete(`/users/${u.id}`, t.cast.owner)).status).toBe(200);
      expect(await summary(guest)).toEqual([
        { type: 'subscription', op: 'peer_remove', stream_ids: [general.id], user_ids: [u.id] },
        // No realm_user update tells this guest, so the groups lose the member explicitly.
        ...groups.map((g) => ({ type: 'user_group', op: 'remove_members', group_id: g, user_ids: [u.id] })),
        { type: 'realm_user', op: 'remove', person: { user_id: u.id, full_name: 'Unknown user' } },
      ]);
      expect(await summary(penPal)).toEqual([{ type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: false } }]);
      expect((await summary(member)).filter((e) => e.type === 'realm_user' || e.type === 'user_group')).toEqual([
        { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: false } },
      ]);

      // What the events say is what a fresh look shows.
      const after = await register(t, t.cast.guest, { fetch_event_types: ['realm_user'] });
      const known = [...after.state.realm_users, ...after.state.realm_non_active_users].map((p: { user_id: number }) => p.user_id);
      expect(known).not.toContain(u.id);
      const hidden = await t.api.get(`/users/${u.id}`, t.cast.guest);
      expect([hidden.status, hidden.body]).toEqual([400, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' }]);
      const stillKnown = await register(t, pen, { fetch_event_types: ['realm_user'] });
      expect(stillKnown.state.realm_non_active_users.map((p: { user_id: number }) => p.user_id)).toContain(u.id);

      // Reactivated, the channel makes the account known again (Zulip sends the update, not an add).
      expect((await t.api.post(`/users/${u.id}/reactivate`, t.cast.owner)).status).toBe(200);
      const back = await summary(guest);
      expect(back.slice(0, 2)).toEqual([
        { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: true } },
        { type: 'subscription', op: 'peer_add', stream_ids: [general.id], user_ids: [u.id] },
      ]);
    });
  });
});
