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
  expected: Record<CastName, Outcome>;
}

const readers = { owner: ok, admin: ok, moderator: ok, member: ok, guest: ok, bot: ok, deactivated } as const;
const admins = (refusal: Outcome) =>
  ({ owner: ok, admin: ok, moderator: refusal, member: refusal, guest: refusal, bot: refusal, deactivated }) as const;
const freshId = (opts: Parameters<typeof freshUser>[1] = {}) => async (t: TestServer) => (await freshUser(t, opts)).id;

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /users', call: (t, who) => t.api.get('/users', t.cast[who]), expected: readers },
  { name: 'GET /users/{id}', call: (t, who) => t.api.get(`/users/${t.cast.member.id}`, t.cast[who]), expected: readers },
  { name: 'GET /users/me', call: (t, who) => t.api.get('/users/me', t.cast[who]), expected: readers },
  {
    name: 'POST /users',
    call: (t, who) => t.api.post('/users', t.cast[who], { email: `made-by-${who}@example.com`, password: 'a-long-password', full_name: 'Made Person' }),
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} full_name',
    prepare: freshId(),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { full_name: 'Renamed Person' }),
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} role to administrator',
    prepare: freshId(),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { role: Role.ADMINISTRATOR }),
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} role to owner',
    prepare: freshId(),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { role: Role.OWNER }),
    expected: { ...admins(notAdmin), admin: notOwner },
  },
  {
    name: 'PATCH /users/{id} of an owner',
    prepare: freshId({ role: Role.OWNER }),
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { role: Role.MEMBER }),
    expected: { ...admins(notAdmin), admin: notOwner },
  },
  {
    name: "PATCH /users/{id} of the caller's own bot",
    prepare: async (t, who) => (await freshUser(t, { isBot: true, botOwnerId: t.cast[who].id })).id,
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { full_name: 'Renamed Bot' }),
    expected: admins(notAdmin),
  },
  {
    name: 'PATCH /users/{id} new_email, the caller holding can_change_user_emails',
    prepare: async (t, who) => {
      await t.ctx.db('users').where({ id: t.cast[who].id }).update({ can_change_user_emails: true });
      return (await freshUser(t)).id;
    },
    call: (t, who, id) => t.api.patch(`/users/${id}`, t.cast[who], { new_email: `moved-${id}@example.com` }),
    expected: { ...admins(notAdmin), admin: { status: 400, msg: 'User not authorized to change user emails', code: 'BAD_REQUEST' } },
  },
  {
    name: 'DELETE /users/{id}',
    prepare: freshId(),
    call: (t, who, id) => t.api.delete(`/users/${id}`, t.cast[who]),
    expected: admins(insufficient),
  },
  {
    name: 'DELETE /users/{id} of an owner',
    prepare: freshId({ role: Role.OWNER }),
    call: (t, who, id) => t.api.delete(`/users/${id}`, t.cast[who]),
    expected: { ...admins(insufficient), admin: notOwner },
  },
  {
    name: 'POST /users/{id}/reactivate',
    prepare: freshId({ deactivated: true }),
    call: (t, who, id) => t.api.post(`/users/${id}/reactivate`, t.cast[who]),
    expected: admins(insufficient),
  },
  { name: 'GET /user_groups', call: (t, who) => t.api.get('/user_groups', t.cast[who]), expected: readers },
  {
    name: 'GET /user_groups/{id}/members/{user}',
    prepare: (t) => systemGroupId(t, 'role:members'),
    call: (t, who, group) => t.api.get(`/user_groups/${group}/members/${t.cast.bot.id}`, t.cast[who]),
    expected: readers,
  },
  {
    name: 'PATCH /realm/user_settings_defaults',
    call: (t, who) => t.api.patch('/realm/user_settings_defaults', t.cast[who], { enter_sends: who.length % 2 === 0 }),
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
