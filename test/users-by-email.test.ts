import { AuditEventType } from '../src/domain/audit';
import { register, pending, startEventsServer, stopEventsServer } from './support/events';
import { eachDatabase } from './support/databases';
import type { TestServer } from './support/server';

/**
 * GET and PATCH /users/{email}: the email form of the user routes, beside the
 * ID form. A segment of digits is an ID; anything else an address, found as
 * Zulip finds it: a placeholder API email by its ID, a real address only when
 * its owner's email_address_visibility lets the caller's role see it.
 */
eachDatabase('users by email', (dialect) => {
  let t: TestServer;
  let hiddenId: number;
  const placeholder = () => `user${hiddenId}@127.0.0.1`;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
    // New accounts hide their address from all but administrators.
    const defaults = await t.api.patch('/realm/user_settings_defaults', t.cast.owner, { email_address_visibility: 3 });
    expect(defaults.status).toBe(200);
    const made = await t.api.post('/users', t.cast.owner, {
      email: 'Hidden.Person@corp.example',
      password: 'a-good-password',
      full_name: 'Hidden Person',
    });
    expect(made.status).toBe(200);
    hiddenId = made.body.user_id;
  });
  afterAll(() => stopEventsServer(t));

  it('finds a user whose address everyone may see, case-insensitively, for every role', async () => {
    for (const role of ['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const) {
      const res = await t.api.get('/users/MEMBER@Example.com', t.cast[role]);
      expect([role, res.status, res.body.user?.user_id]).toEqual([role, 200, t.cast.member.id]);
    }
  });

  it('finds a hidden address only for the roles its visibility admits; others get No such user', async () => {
    const expected = { owner: 200, admin: 200, moderator: 400, member: 400, guest: 400 } as const;
    for (const [role, status] of Object.entries(expected) as Array<[keyof typeof expected, number]>) {
      const res = await t.api.get('/users/hidden.person@corp.example', t.cast[role]);
      expect([role, res.status]).toEqual([role, status]);
      if (status === 400) expect(res.body).toEqual({ result: 'error', msg: 'No such user', code: 'BAD_REQUEST' });
      else expect(res.body.user).toMatchObject({ user_id: hiddenId, email: placeholder(), delivery_email: 'Hidden.Person@corp.example' });
    }
  });

  it('finds anyone by the placeholder API email', async () => {
    const res = await t.api.get(`/users/${placeholder()}`, t.cast.member);
    expect([res.status, res.body.user.user_id, res.body.user.delivery_email]).toEqual([200, hiddenId, null]);
    const unknown = await t.api.get('/users/user99999@127.0.0.1', t.cast.member);
    expect([unknown.status, unknown.body.msg]).toEqual([400, 'No such user']);
  });

  it('takes digits as an ID and any other word as an address (not "user_id is not an integer")', async () => {
    const byId = await t.api.get(`/users/${t.cast.member.id}`, t.cast.member);
    expect([byId.status, byId.body.user.email]).toEqual([200, 'member@example.com']);
    for (const word of ['iago@zulip.com', 'nobody', '-5', '12abc']) {
      const res = await t.api.get(`/users/${encodeURIComponent(word)}`, t.cast.member);
      expect([word, res.status, res.body.msg]).toEqual([word, 400, 'No such user']);
    }
  });

  it('returns bots and deactivated users, with profile data when asked', async () => {
    const bot = await t.api.get('/users/bot@example.com', t.cast.guest);
    expect([bot.status, bot.body.user.is_bot]).toEqual([200, true]);
    const gone = await t.api.get('/users/deactivated@example.com', t.cast.member, { include_custom_profile_fields: true });
    expect([gone.status, gone.body.user.is_active, gone.body.user.profile_data]).toEqual([200, false, {}]);
  });

  it('answers a guest limited by can_access_all_users_group as for the ID form', async () => {
    const nobody = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id');
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: nobody!.id });
    try {
      const res = await t.api.get('/users/deactivated@example.com', t.cast.guest);
      expect([res.status, res.body.msg]).toEqual([400, 'Insufficient permission']);
      const byId = await t.api.get(`/users/${t.cast.deactivated.id}`, t.cast.guest);
      expect(byId.body.msg).toBe('Insufficient permission');
    } finally {
      const everyone = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:everyone' }).first('id');
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: everyone!.id });
    }
  });

  it('PATCH: administrators update a user named by email, with the event and audit row of the ID form', async () => {
    const watcher = await register(t, t.cast.member, { event_types: ['realm_user'] });
    const mark = Number((await t.ctx.db('audit_log').max({ id: 'id' }).first())?.id ?? 0);
    const res = await t.api.patch('/users/hidden.person@corp.example', t.cast.admin, { full_name: 'Shown Person' });
    expect([res.status, res.body.result]).toEqual([200, 'success']);
    const byId = await t.api.get(`/users/${hiddenId}`, t.cast.member);
    expect(byId.body.user.full_name).toBe('Shown Person');
    const events = await pending(t, watcher);
    expect(events).toEqual([
      expect.objectContaining({ type: 'realm_user', op: 'update', person: { user_id: hiddenId, full_name: 'Shown Person' } }),
    ]);
    const rows = await t.ctx.db('audit_log').where('id', '>', mark);
    expect(rows.map((r) => [r.event_type, Number(r.acting_user_id), Number(r.modified_user_id)])).toEqual([
      [AuditEventType.USER_FULL_NAME_CHANGED, t.cast.admin.id, hiddenId],
    ]);
  });

  it('PATCH: anyone below administrator is refused before the address is looked up', async () => {
    for (const role of ['moderator', 'member', 'guest'] as const) {
      for (const address of ['member@example.com', 'nobody@nowhere.example']) {
        const res = await t.api.patch(`/users/${address}`, t.cast[role], { full_name: 'Renamed' });
        expect([role, address, res.status, res.body.code, res.body.msg]).toEqual([
          role,
          address,
          400,
          'UNAUTHORIZED_PRINCIPAL',
          'Must be an organization administrator',
        ]);
      }
    }
    const unknown = await t.api.patch('/users/nobody@nowhere.example', t.cast.admin, { full_name: 'Renamed' });
    expect([unknown.status, unknown.body.msg]).toEqual([400, 'No such user']);
    // The owner role rules of the ID form hold.
    const owner = await t.api.patch('/users/owner@example.com', t.cast.admin, { role: 400 });
    expect([owner.status, owner.body.msg]).toEqual([400, 'Must be an organization owner']);
  });
});
