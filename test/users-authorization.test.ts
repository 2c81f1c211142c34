import { Role } from '../src/domain/roles';
import { eachDatabase } from './support/databases';
import { ApiResponse, CastName, startTestServer, TestServer } from './support/server';
import { CAST_NAMES, freshUser, snapshot, systemGroupId } from './users-fixtures';

/**
 * Who may call each users / groups / defaults endpoint, per role, as Zulip
 * allows it: a table per endpoint with the outcome for every member of the
 * cast. A refused call must answer exactly and change nothing; an allowed
 * one must succeed. Any role gaining a right it should not have fails here.
 */
type Outcome = 'ok' | { status: number; msg: string; code: string };

const ok = 'ok' as const;
const notAdmin = { status: 400, msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' };
const insufficient = { status: 400, msg: 'Insufficient permission', code: 'BAD_REQUEST' };
const notOwner = { status: 400, msg: 'Must be an organization owner', code: 'UNAUTHORIZED_PRINCIPAL' };
const deactivated = { status: 401, msg: 'Account is deactivated', code: 'UNAUTHORIZED' };

interface Endpoint {
  name: string;
  /** Prepares what the call acts on (a fresh target), so that allowed calls never meet each other. */
  prepare?(t: TestServer, who: CastName): Promise<number>;
  /** The request as `who`, given the prepared target's ID. */
  call(t: TestServer, who: CastName, target: number): Promise<ApiResponse>;
  /** What an allowed call did: its answer, or its effect in the database. */
  effect(t: TestServer, who: CastName, target: number, res: ApiResponse): Promise<void>;
  expected: Record<CastName, Outcome>;
}

/** The columns of a user an endpoint changes, as stored. */
const userRow = async (t: TestServer, id: number) => {
  const row = await t.ctx.db('users').where({ id }).first('full_name', 'role', 'is_active', 'delivery_email');
  return { ...row, is_active: Boolean(row!.is_active) };
};

const readers = { owner: ok, admin: ok, moderator: ok, member: ok, guest: ok, bot: ok, deactivated } as const;
const admins = (refusal: Outcome) =>
  ({ owner: ok, admin: ok, moderator: refusal, member: refusal, guest: refusal, bot: refusal, deactivated }) as const;
const freshId =
  (opts: Parameters<typeof freshUser>[1] = {}) =>
  async (t: TestServer) =>
    (await freshUser(t, opts)).id;

const ENDPOINTS: Endpoint[] = [
  {
    name: 'GET /users',
    call: (t, who) => t.api.get('/users', t.cast[who]),
    effect: async (t, _who, _id, res) =>
      expect(res.body.members.map((u: { user_id: number }) => u.user_id)).toEqual(
        expect.arrayContaining([t.cast.owner.id, t.cast.member.id, t.cast.bot.id]),
      ),
    expected: readers,
  },
  {
    name: 'GET /users/{id}',
    call: (t, who) => t.api.get(`/users/${t.cast.member.id}`, t.cast[who]),
    effect: async (t, _who, _id, res) => expect(res.body.user).toMatchObject({ user_id: t.cast.member.id, full_name: 'Test Member' }),
    expected: readers,
  },
  {
    name: 'GET /users/me',
    call: (t, who) => t.api.get('/users/me', t.cast[who]),
    effect: async (t, who, _id, res) => expect([res.body.user_id, res.body.full_name]).toEqual([t.cast[who].id, t.cast[who].full_name]),
    expected: readers,
  },
  {
    name: 'POST /users',
    call: (t, who) =>
      t.api.post('/users', t.cast[who], { email: `made-by-${who}@example.com`, password: 'a-long-password', full_name: 'Made Person' }),
    effect: async (t, who, _id, res) => {
      const row = await t.ctx
        .db('users')
        .where({ delivery_email: `made-by-${who}@example.com` })
        .first('id', 'full_name', 'role', 'realm_id');
      expect(row).toEqual({ id: res.body.user_id, full_name: 'Made Person', role: Role.MEMBER, realm_id: t.realmId });
    },
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} full_name',
    prepare: freshId(),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { full_name: 'Renamed Person' }),
    effect: async (t, _who, id) => expect((await userRow(t, id)).full_name).toBe('Renamed Person'),
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} role to administrator',
    prepare: freshId(),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { role: Role.ADMINISTRATOR }),
    effect: async (t, _who, id) => expect((await userRow(t, id)).role).toBe(Role.ADMINISTRATOR),
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} role to owner',
    prepare: freshId(),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { role: Role.OWNER }),
    effect: async (t, _who, id) => expect((await userRow(t, id)).role).toBe(Role.OWNER),
    expected: { ...admins(notAdmin), admin: notOwner },
  },
  {
    name: 'PATCH /users/{id} of an owner',
    prepare: freshId({ role: Role.OWNER }),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { role: Role.MEMBER }),
    effect: async (t, _who, id) => expect((await userRow(t, id)).role).toBe(Role.MEMBER),
    expected: { ...admins(notAdmin), admin: notOwner },
  },
  {
    name: "PATCH /users/{id} of the caller's own bot",
    prepare: async (t, who) => (await freshUser(t, { isBot: true, botOwnerId: t.cast[who].id })).id,
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { full_name: 'Renamed Bot' }),
    effect: async (t, _who, id) => expect((await userRow(t, id)).full_name).toBe('Renamed Bot'),
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} new_email, the caller holding can_change_user_emails',
    prepare: async (t, who) => {
      await t.ctx.db('users').where({ id: t.cast[who].id }).update({ can_change_user_emails: true });
      return (await freshUser(t)).id;
    },
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { new_email: `moved-${id}@example.com` }),
    effect: async (t, _who, id) => expect((await userRow(t, id)).delivery_email).toBe(`moved-${id}@example.com`),
    expected: { ...admins(notAdmin), admin: { status: 400, msg: 'User not authorized to change user emails', code: 'BAD_REQUEST' } },
  },
  {
    name: 'DELETE /users/{id}',
    prepare: freshId(),
    call: (t, who, id) => t.api.delete(`/users/${id}`, t.cast[who]),
    effect: async (t, _who, id) => expect((await userRow(t, id)).is_active).toBe(false),
    expected: admins(insufficient),
  },
  {
    name: 'DELETE /users/{id} of an owner',
    prepare: freshId({ role: Role.OWNER }),
    call: (t, who, id) => t.api.delete(`/users/${id}`, t.cast[who]),
    effect: async (t, _who, id) => expect((await userRow(t, id)).is_active).toBe(false),
    expected: { ...admins(insufficient), admin: notOwner },
  },
  {
    name: 'POST /users/{id}/reactivate',
    prepare: freshId({ deactivated: true }),
    call: (t, who, id) => t.api.post(`/users/${id}/reactivate`, t.cast[who]),
    effect: async (t, _who, id) => expect((await userRow(t, id)).is_active).toBe(true),
    expected: admins(insufficient),
  },
  {
    name: 'GET /user_groups',
    call: (t, who) => t.api.get('/user_groups', t.cast[who]),
    effect: async (_t, _who, _id, res) =>
      expect(res.body.user_groups.map((g: { name: string }) => g.name)).toEqual(expect.arrayContaining(['role:members', 'role:everyone'])),
    expected: readers,
  },
  {
    name: 'GET /user_groups/{id}/members/{user}',
    prepare: (t) => systemGroupId(t, 'role:members'),
    call: (t, who, group) => t.api.get(`/user_groups/${group}/members/${t.cast.bot.id}`, t.cast[who]),
    effect: async (_t, _who, _id, res) => expect(res.body.is_user_group_member).toBe(true),
    expected: readers,
  },
  {
    name: 'PATCH /realm/user_settings_defaults',
    // The target is the current default (0 or 1); the call asks for the other value.
    prepare: async (t) =>
      Number(JSON.parse((await t.ctx.db('realm_user_defaults').where({ realm_id: t.realmId }).first('settings'))!.settings).enter_sends),
    call: (t, who, current) => t.api.patch('/realm/user_settings_defaults', t.cast[who], { enter_sends: !current }),
    effect: async (t, _who, current) => {
      const row = await t.ctx.db('realm_user_defaults').where({ realm_id: t.realmId }).first('settings');
      expect(JSON.parse(row!.settings).enter_sends).toBe(!current);
    },
    expected: admins(notAdmin),
  },
];

eachDatabase('authorization of the users endpoints', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    // A second owner, so that owner-demoting rows never meet the only-owner rule.
    await freshUser(t, { role: Role.OWNER });
  });
  afterAll(() => t.close());

  describe.each(ENDPOINTS)('$name', (endpoint) => {
    it.each(CAST_NAMES)('%s', async (who) => {
      const expected = endpoint.expected[who];
      const target = endpoint.prepare ? await endpoint.prepare(t, who) : 0;
      try {
        const before = await snapshot(t);
        const res = await endpoint.call(t, who, target);
        if (expected === 'ok') {
          expect({ status: res.status, result: res.body.result }).toEqual({ status: 200, result: 'success' });
          await endpoint.effect(t, who, target, res);
          return;
        }
        expect(res.status).toBe(expected.status);
        expect(res.body).toEqual({ result: 'error', msg: expected.msg, code: expected.code });
        expect(await snapshot(t)).toBe(before);
      } finally {
        await t.ctx.db('users').where({ id: t.cast[who].id }).update({ can_change_user_emails: false });
      }
    });
  });
});
