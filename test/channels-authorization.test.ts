import { eachDatabase } from './support/databases';
import { CastName, createChannel, startTestServer, TestServer } from './support/server';

/**
 * Who may do what with channels, subscriptions and invitation links, with
 * the organization's default settings. A role that can do more than Zulip
 * allows fails here; a refusal must also leave the database unchanged.
 */
const ROLES: CastName[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot', 'deactivated'];

type Outcome = 'ok' | 400 | 401;
const TABLE: Record<string, Record<CastName, Outcome>> = {
  'create a public channel': { owner: 'ok', admin: 'ok', moderator: 'ok', member: 'ok', guest: 400, bot: 'ok', deactivated: 401 },
  'create a private channel': { owner: 'ok', admin: 'ok', moderator: 'ok', member: 'ok', guest: 400, bot: 'ok', deactivated: 401 },
  'create a default channel': { owner: 'ok', admin: 'ok', moderator: 400, member: 400, guest: 400, bot: 400, deactivated: 401 },
  'subscribe someone else to a public channel': { owner: 'ok', admin: 'ok', moderator: 'ok', member: 'ok', guest: 400, bot: 'ok', deactivated: 401 },
  'join a private channel uninvited': { owner: 400, admin: 400, moderator: 400, member: 400, guest: 400, bot: 400, deactivated: 401 },
  'unsubscribe someone else': { owner: 'ok', admin: 'ok', moderator: 400, member: 400, guest: 400, bot: 400, deactivated: 401 },
  'create an invitation link': { owner: 'ok', admin: 'ok', moderator: 400, member: 400, guest: 400, bot: 400, deactivated: 401 },
  'invite an administrator': { owner: 'ok', admin: 'ok', moderator: 400, member: 400, guest: 400, bot: 400, deactivated: 401 },
  'pin a channel one is subscribed to': { owner: 'ok', admin: 'ok', moderator: 'ok', member: 'ok', guest: 'ok', bot: 'ok', deactivated: 401 },
};

eachDatabase('channel authorization table', (dialect) => {
  let t: TestServer;
  let n = 0;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    await createChannel(t, 'lounge', ROLES.map((r) => t.cast[r]));
    await createChannel(t, 'secret', [], { inviteOnly: true });
  });
  afterAll(() => t.close());

  const snapshot = async () => ({
    channels: await t.ctx.db('channels').orderBy('id').select('id', 'name'),
    subscriptions: await t.ctx.db('subscriptions').orderBy('id').select('user_id', 'recipient_id', 'active', 'pin_to_top'),
    invites: await t.ctx.db('multiuse_invites').count({ n: '*' }).first(),
  });

  /** Sets a user's lounge subscription active or not (test setup; SQLite has no UPDATE … JOIN). */
  const setLounge = async (userId: number, active: boolean) => {
    const lounge = await t.ctx.db('channels').where({ name: 'lounge' }).first('recipient_id');
    await t.ctx.db('subscriptions').where({ user_id: userId, recipient_id: lounge.recipient_id }).update({ active });
  };

  const act = async (what: string, role: CastName) => {
    const u = t.cast[role];
    const name = `room-${role}-${n++}`;
    switch (what) {
      case 'create a public channel':
        return t.api.post('/channels/create', u, { name, subscribers: [u.id] });
      case 'create a private channel':
        return t.api.post('/channels/create', u, { name, subscribers: [u.id], invite_only: true });
      case 'create a default channel':
        return t.api.post('/channels/create', u, { name, subscribers: [u.id], is_default_stream: true });
      case 'subscribe someone else to a public channel': {
        const target = role === 'member' ? t.cast.moderator : t.cast.member;
        await setLounge(target.id, false);
        return t.api.post('/users/me/subscriptions', u, { subscriptions: [{ name: 'lounge' }], principals: [target.id] });
      }
      case 'join a private channel uninvited':
        return t.api.post('/users/me/subscriptions', u, { subscriptions: [{ name: 'secret' }] });
      case 'unsubscribe someone else': {
        const target = role === 'member' ? t.cast.moderator : t.cast.member;
        await setLounge(target.id, true);
        return t.api.delete('/users/me/subscriptions', u, { subscriptions: ['lounge'], principals: [target.id] });
      }
      case 'create an invitation link':
        return t.api.post('/invites/multiuse', u, {});
      case 'invite an administrator':
        return t.api.post('/invites/multiuse', u, { invite_as: 200 });
      case 'pin a channel one is subscribed to': {
        const lounge = await t.ctx.db('channels').where({ name: 'lounge' }).first('id', 'recipient_id');
        await t.ctx.db('subscriptions').where({ user_id: u.id, recipient_id: lounge.recipient_id }).update({ active: true });
        return t.api.patch(`/users/me/subscriptions/${lounge.id}`, u, { property: 'pin_to_top', value: true });
      }
    }
    throw new Error(what);
  };

  for (const [what, byRole] of Object.entries(TABLE)) {
    describe(what, () => {
      it.each(ROLES)('as %s', async (role) => {
        const expected = byRole[role];
        if (expected === 'ok') {
          const res = await act(what, role);
          expect([res.status, res.body.msg]).toEqual([200, '']);
        } else {
          const res = await act(what, role);
          const before = await snapshot();
          expect(res.status).toBe(expected);
          expect(res.body.result).toBe('error');
          // Repeat after the snapshot: a refused request changes nothing.
          await act(what, role);
          expect(await snapshot()).toEqual(before);
        }
      });
    });
  }
});
