import { Role } from '../src/domain/roles';
import { eachDatabase } from './support/databases';
import { ApiResponse, createChannel, startTestServer, subscribe, TestServer } from './support/server';
import { captureEvents, expectRefusal, freshUser } from './users-fixtures';

eachDatabase('deactivating and reactivating users', (dialect) => {
  let t: TestServer;
  let channel: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    channel = await createChannel(t, 'deactivation', [t.cast.owner]);
  });
  afterAll(() => t.close());

  const row = (id: number) => t.ctx.db('users').where({ id }).first();
  const subsActive = async (userId: number) =>
    (await t.ctx.db('subscriptions').where({ user_id: userId, recipient_id: channel.recipient_id }).first('is_user_active'))!
      .is_user_active;

  const expectRefused = (res: Promise<ApiResponse>, msg: string, code = 'BAD_REQUEST') => expectRefusal(t, () => res, msg, code);

  describe('DELETE /users/{user_id}', () => {
    it('deactivates: the API key stops working at once, subscriptions go inactive, users are told', async () => {
      const u = await freshUser(t);
      await subscribe(t, channel, [u]);
      expect((await t.api.get('/users/me', u)).status).toBe(200);
      const { result: res, deliveries } = await captureEvents(t, () => t.api.delete(`/users/${u.id}`, t.cast.admin));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      const me = await t.api.get('/users/me', u);
      expect(me.status).toBe(401);
      expect(me.body).toEqual({ result: 'error', msg: 'Account is deactivated', code: 'UNAUTHORIZED' });
      expect(me.headers['www-authenticate']).toBe('Basic realm="zulip"');
      expect(Boolean((await row(u.id))!.is_active)).toBe(false);
      expect(Boolean(await subsActive(u.id))).toBe(false);
      expect(deliveries.map((d) => d.event)).toEqual([
        { type: 'subscription', op: 'peer_remove', stream_ids: [channel.id], user_ids: [u.id] },
        { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: false } },
      ]);
      expect(deliveries[1]!.userIds).toContain(t.cast.member.id);
      expect(deliveries[1]!.userIds).not.toContain(u.id);
    });

    it('deactivates the bots the user owns with them, as Zulip does', async () => {
      const u = await freshUser(t);
      const bot = await freshUser(t, { isBot: true, botOwnerId: u.id });
      const { deliveries } = await captureEvents(t, () => t.api.delete(`/users/${u.id}`, t.cast.owner));
      expect(Boolean((await row(bot.id))!.is_active)).toBe(false);
      // The bots first, as Zulip deactivates them before their owner.
      expect(deliveries.filter((d) => d.event.type === 'realm_user').map((d) => d.event.person)).toEqual([
        { user_id: bot.id, is_active: false },
        { user_id: u.id, is_active: false },
      ]);
      // The administrators learn it from that realm_user update (bots are known to all; the owner is
      // leaving too): since feature level 474 Zulip sends no realm_bot update {is_active}.
      const botUpdate = deliveries.filter((d) => d.event.type === 'realm_user')[0]!;
      expect(botUpdate.userIds).toEqual(expect.arrayContaining([t.cast.owner.id, t.cast.admin.id, t.cast.member.id]));
      expect(deliveries.filter((d) => d.event.type === 'realm_bot')).toEqual([]);
      const asBot = await t.api.get('/users/me', bot);
      expect([asBot.status, asBot.body]).toEqual([401, { result: 'error', msg: 'Account is deactivated', code: 'UNAUTHORIZED' }]);
    });

    it('lets an owner deactivate another owner', async () => {
      const other = await freshUser(t, { role: Role.OWNER });
      expect((await t.api.delete(`/users/${other.id}`, t.cast.owner)).status).toBe(200);
    });

    it('accepts (and sends no mail for) deactivation_notification_comment', async () => {
      const u = await freshUser(t);
      const res = await t.api.delete(`/users/${u.id}`, t.cast.admin, { deactivation_notification_comment: 'Bye' });
      expect(res.status).toBe(200);
      expect(res.body.ignored_parameters_unsupported).toBeUndefined();
    });

    it('refuses an administrator deactivating an owner', async () => {
      const other = await freshUser(t, { role: Role.OWNER });
      await expectRefused(t.api.delete(`/users/${other.id}`, t.cast.admin), 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
    });

    it('refuses to deactivate the only owner', async () => {
      await t.ctx
        .db('users')
        .where({ realm_id: t.realmId, role: Role.OWNER })
        .whereNot({ id: t.cast.owner.id })
        .update({ role: Role.MEMBER });
      await expectRefused(t.api.delete(`/users/${t.cast.owner.id}`, t.cast.owner), 'Cannot deactivate the only organization owner');
    });

    it("refuses bots, unknown IDs and deactivated users in Zulip's words", async () => {
      await expectRefused(t.api.delete(`/users/${t.cast.bot.id}`, t.cast.admin), 'No such user');
      await expectRefused(t.api.delete('/users/99999', t.cast.admin), 'No such user');
      await expectRefused(t.api.delete(`/users/${t.cast.deactivated.id}`, t.cast.admin), 'User is deactivated');
    });

    it('refuses a non-administrator with Insufficient permission', async () => {
      const u = await freshUser(t);
      await expectRefused(t.api.delete(`/users/${u.id}`, t.cast.moderator), 'Insufficient permission');
    });
  });

  describe('POST /users/{user_id}/reactivate', () => {
    it('restores a user: API key, subscriptions and an event', async () => {
      const u = await freshUser(t);
      await subscribe(t, channel, [u]);
      await t.api.delete(`/users/${u.id}`, t.cast.admin);
      const { result: res, deliveries } = await captureEvents(t, () => t.api.post(`/users/${u.id}/reactivate`, t.cast.admin));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect((await t.api.get('/users/me', u)).status).toBe(200);
      expect(Boolean(await subsActive(u.id))).toBe(true);
      const groups = (await t.ctx.db('group_members').where({ user_id: u.id }).orderBy('group_id').pluck('group_id')).map(Number);
      expect(deliveries.map((d) => d.event)).toEqual([
        { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: true } },
        { type: 'subscription', op: 'peer_add', stream_ids: [channel.id], user_ids: [u.id] },
        ...groups.map((g) => ({ type: 'user_group', op: 'add_members', group_id: g, user_ids: [u.id] })),
      ]);
      expect(groups.length).toBeGreaterThan(0);
      expect(deliveries[0]!.userIds).toContain(u.id);
      expect(deliveries[1]!.userIds).not.toContain(u.id);
    });

    it("restores a bot, and a deactivated user's group memberships count again", async () => {
      const bot = await freshUser(t, { isBot: true, deactivated: true });
      expect((await t.api.post(`/users/${bot.id}/reactivate`, t.cast.owner)).status).toBe(200);
      expect((await t.api.get('/users/me', bot)).status).toBe(200);
      const members = (await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id'))!.id;
      const res = await t.api.get(`/user_groups/${members}/members/${bot.id}`, t.cast.member);
      expect(res.body.is_user_group_member).toBe(true);
    });

    it('refuses an active user, unknown IDs and non-administrators', async () => {
      await expectRefused(t.api.post(`/users/${t.cast.member.id}/reactivate`, t.cast.admin), 'User is already active');
      await expectRefused(t.api.post('/users/99999/reactivate', t.cast.admin), 'No such user');
      const u = await freshUser(t, { deactivated: true });
      await expectRefused(t.api.post(`/users/${u.id}/reactivate`, t.cast.member), 'Insufficient permission');
      expect(Boolean((await row(u.id))!.is_active)).toBe(false);
    });
  });
});
