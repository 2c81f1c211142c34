import { FieldType } from '../src/domain/profile-fields';
import { Role } from '../src/domain/roles';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';
import { captureEvents, createProfileField, expectRefusal, freshUser, systemGroupsOf, userOfAnotherRealm } from './users-fixtures';

eachDatabase('PATCH /users/{user_id}', (dialect) => {
  let t: TestServer;
  const fields: Record<string, number> = {};
  beforeAll(async () => {
    t = await startTestServer(dialect);
    fields.phone = await createProfileField(t, 'Phone number', FieldType.SHORT_TEXT);
    fields.bio = await createProfileField(t, 'Biography', FieldType.LONG_TEXT);
    fields.editor = await createProfileField(t, 'Favorite editor', FieldType.SELECT, {
      vim: { text: 'Vim', order: '1' },
      emacs: { text: 'Emacs', order: '2' },
    });
    fields.birthday = await createProfileField(t, 'Birthday', FieldType.DATE);
    fields.website = await createProfileField(t, 'Website', FieldType.URL);
    fields.mentor = await createProfileField(t, 'Mentor', FieldType.USER);
    fields.github = await createProfileField(t, 'GitHub', FieldType.EXTERNAL_ACCOUNT, { subtype: 'github' });
    fields.pronouns = await createProfileField(t, 'Pronouns', FieldType.PRONOUNS);
  });
  afterAll(() => t.close());

  const patch = (who: keyof TestServer['cast'] | null, id: number, fields: Record<string, unknown>) =>
    t.api.patch(`/users/${id}`, who ? t.cast[who] : null, fields);
  const row = (id: number) => t.ctx.db('users').where({ id }).first();
  /** Other tests make owners; the "only owner" rules need the cast owner alone again. */
  const onlyCastOwner = () =>
    t.ctx.db('users').where({ realm_id: t.realmId, role: Role.OWNER }).whereNot({ id: t.cast.owner.id }).update({ role: Role.MEMBER });

  const expectRefused = (who: keyof TestServer['cast'], id: number, body: Record<string, unknown>, msg: string, code = 'BAD_REQUEST') =>
    expectRefusal(t, () => patch(who, id, body), msg, code);

  describe('full_name', () => {
    it('renames a user, trimmed, and tells the organization', async () => {
      const u = await freshUser(t);
      const { result: res, deliveries } = await captureEvents(t, () => patch('admin', u.id, { full_name: '  Renamed Person ' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect((await row(u.id))!.full_name).toBe('Renamed Person');
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]!.event).toEqual({ type: 'realm_user', op: 'update', person: { user_id: u.id, full_name: 'Renamed Person' } });
      expect(deliveries[0]!.userIds).toContain(t.cast.member.id);
      expect(deliveries[0]!.userIds).not.toContain(t.cast.deactivated.id);
    });

    it('renames bots and deactivated users too', async () => {
      for (const u of [t.cast.bot, t.cast.deactivated]) {
        const res = await patch('owner', u.id, { full_name: `${u.full_name} Renamed` });
        expect(res.status).toBe(200);
        expect((await row(u.id))!.full_name).toBe(`${u.full_name} Renamed`);
      }
    });

    it('ignores a blank or unchanged name, as Zulip does', async () => {
      const u = await freshUser(t);
      for (const full_name of ['   ', u.full_name]) {
        const { result: res, deliveries } = await captureEvents(t, () => patch('admin', u.id, { full_name }));
        expect(res.status).toBe(200);
        expect(deliveries).toEqual([]);
      }
      expect((await row(u.id))!.full_name).toBe(u.full_name);
    });

    it.each([
      ['n'.repeat(101), 'Name too long!'],
      ['x', 'Name too short!'],
      ['Bad *Name*', 'Invalid characters in name!'],
      ['Looks Like|15', 'Invalid format!'],
    ])('refuses %j', async (full_name, msg) => {
      const u = await freshUser(t);
      await expectRefused('admin', u.id, { full_name }, msg);
    });
  });

  describe('role', () => {
    it('moves a member to moderator: role, system groups and events', async () => {
      const u = await freshUser(t);
      expect(await systemGroupsOf(t, u.id)).toEqual(['role:fullmembers', 'role:members']);
      const { result: res, deliveries } = await captureEvents(t, () => patch('admin', u.id, { role: Role.MODERATOR }));
      expect(res.status).toBe(200);
      expect((await row(u.id))!.role).toBe(300);
      expect(await systemGroupsOf(t, u.id)).toEqual(['role:moderators']);
      const events = deliveries.map((d) => d.event);
      expect(events[0]).toEqual({ type: 'realm_user', op: 'update', person: { user_id: u.id, role: 300 } });
      expect(
        events
          .filter((e) => e.type === 'user_group')
          .map((e) => e.op)
          .sort(),
      ).toEqual(['add_members', 'remove_members', 'remove_members']);
      const me = await t.api.get('/users/me', { ...u, role: 300 });
      expect(me.body.role).toBe(300);
    });

    it('moves a moderator back to member, who rejoins role:fullmembers (waiting period 0)', async () => {
      const u = await freshUser(t, { role: Role.MODERATOR });
      expect((await patch('admin', u.id, { role: Role.MEMBER })).status).toBe(200);
      expect(await systemGroupsOf(t, u.id)).toEqual(['role:fullmembers', 'role:members']);
    });

    it('leaves a new member out of role:fullmembers while the waiting period runs', async () => {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ waiting_period_threshold: 3 });
      try {
        const u = await freshUser(t, { role: Role.GUEST });
        expect((await patch('admin', u.id, { role: Role.MEMBER })).status).toBe(200);
        expect(await systemGroupsOf(t, u.id)).toEqual(['role:members']);
      } finally {
        await t.ctx.db('realms').where({ id: t.realmId }).update({ waiting_period_threshold: 0 });
      }
    });

    it('makes a guest a member, then an administrator', async () => {
      const u = await freshUser(t, { role: Role.GUEST });
      expect(await systemGroupsOf(t, u.id)).toEqual(['role:everyone']);
      expect((await patch('admin', u.id, { role: Role.MEMBER })).status).toBe(200);
      expect((await patch('admin', u.id, { role: Role.ADMINISTRATOR })).status).toBe(200);
      expect(await systemGroupsOf(t, u.id)).toEqual(['role:administrators']);
    });

    it('lets an owner grant and remove the owner role', async () => {
      const u = await freshUser(t);
      expect((await patch('owner', u.id, { role: Role.OWNER })).status).toBe(200);
      expect(await systemGroupsOf(t, u.id)).toEqual(['role:owners']);
      expect((await patch('owner', u.id, { role: Role.MEMBER })).status).toBe(200);
      expect((await row(u.id))!.role).toBe(400);
    });

    it("treats an unchanged role as nothing to do, even the only owner's", async () => {
      const { result: res, deliveries } = await captureEvents(t, () => patch('admin', t.cast.owner.id, { role: Role.OWNER }));
      expect(res.status).toBe(200);
      expect(deliveries).toEqual([]);
    });

    it('refuses an administrator granting the owner role', async () => {
      const u = await freshUser(t);
      await expectRefused('admin', u.id, { role: Role.OWNER }, 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
    });

    it('refuses an administrator removing the owner role', async () => {
      const u = await freshUser(t, { role: Role.OWNER });
      await expectRefused('admin', u.id, { role: Role.ADMINISTRATOR }, 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
    });

    it('keeps the owner role on the only owner, even for the owner', async () => {
      await onlyCastOwner();
      await expectRefused(
        'owner',
        t.cast.owner.id,
        { role: Role.ADMINISTRATOR },
        'The owner permission cannot be removed from the only organization owner.',
      );
    });

    it('lets an owner demote another owner; a deactivated owner is no second owner', async () => {
      await onlyCastOwner();
      const second = await freshUser(t, { role: Role.OWNER });
      expect((await patch('owner', second.id, { role: Role.MEMBER })).status).toBe(200);
      // A deactivated owner does not count as a second owner.
      const dormant = await freshUser(t, { role: Role.OWNER, deactivated: true });
      await onlyCastOwner();
      await t.ctx.db('users').where({ id: dormant.id }).update({ role: Role.OWNER });
      await expectRefused(
        'owner',
        t.cast.owner.id,
        { role: Role.MEMBER },
        'The owner permission cannot be removed from the only organization owner.',
      );
      expect(dormant.role).toBe(100);
    });

    it.each([Role.ADMINISTRATOR, Role.OWNER])('refuses making a guest role %i', async (role) => {
      const u = await freshUser(t, { role: Role.GUEST });
      await expectRefused('owner', u.id, { role }, 'Guests cannot be organization administrators');
    });

    it.each([
      [500, 'Invalid role'],
      ['"admin"', 'role is not an integer'],
    ])('refuses role %j', async (role, msg) => {
      const u = await freshUser(t);
      await expectRefused('owner', u.id, { role }, msg);
    });
  });

  describe('profile_data', () => {
    const values = async (userId: number) =>
      Object.fromEntries(
        (await t.ctx.db('custom_profile_values').where({ user_id: userId }).select('field_id', 'value', 'rendered_value')).map((v: any) => [
          v.field_id,
          v.rendered_value === null ? v.value : [v.value, v.rendered_value],
        ]),
      );

    it('sets a value of every field type, shown by GET /users/{id}', async () => {
      const u = await freshUser(t);
      const profile_data = [
        { id: fields.phone, value: '+1 *555*' },
        { id: fields.bio, value: 'Likes **tea**.' },
        { id: fields.editor, value: 'vim' },
        { id: fields.birthday, value: '1990-02-28' },
        { id: fields.website, value: 'https://example.org/me' },
        { id: fields.mentor, value: [t.cast.member.id, t.cast.admin.id] },
        { id: fields.github, value: 'octocat' },
        { id: fields.pronouns, value: 'they/them' },
      ];
      const res = await patch('admin', u.id, { profile_data });
      expect(res.status).toBe(200);
      const got = await t.api.get(`/users/${u.id}`, t.cast.member, { include_custom_profile_fields: true });
      expect(got.body.user.profile_data).toEqual({
        [fields.phone!]: { value: '+1 *555*', rendered_value: '<p>+1 <em>555</em></p>' },
        [fields.bio!]: { value: 'Likes **tea**.', rendered_value: '<p>Likes <strong>tea</strong>.</p>' },
        [fields.editor!]: { value: 'vim' },
        [fields.birthday!]: { value: '1990-02-28' },
        [fields.website!]: { value: 'https://example.org/me' },
        [fields.mentor!]: { value: JSON.stringify([t.cast.member.id, t.cast.admin.id]) },
        [fields.github!]: { value: 'octocat' },
        [fields.pronouns!]: { value: 'they/them' },
      });
    });

    it('announces each changed value, and only changed ones', async () => {
      const u = await freshUser(t);
      await patch('admin', u.id, { profile_data: [{ id: fields.pronouns, value: 'she/her' }] });
      const { deliveries } = await captureEvents(t, () =>
        patch('admin', u.id, {
          profile_data: [
            { id: fields.pronouns, value: 'she/her' },
            { id: fields.phone, value: '123' },
          ],
        }),
      );
      expect(deliveries.map((d) => d.event)).toEqual([
        {
          type: 'realm_user',
          op: 'update',
          person: { user_id: u.id, custom_profile_field: { id: fields.phone, value: '123', rendered_value: '<p>123</p>' } },
        },
      ]);
    });

    it.each([null, '', []])('clears a value given as %j', async (value) => {
      const u = await freshUser(t);
      await patch('admin', u.id, {
        profile_data: [
          { id: fields.phone, value: '5' },
          { id: fields.mentor, value: [t.cast.member.id] },
        ],
      });
      const field = Array.isArray(value) ? fields.mentor! : fields.phone!;
      const { result: res, deliveries } = await captureEvents(t, () => patch('admin', u.id, { profile_data: [{ id: field, value }] }));
      expect(res.status).toBe(200);
      expect(Object.keys(await values(u.id))).not.toContain(String(field));
      expect(deliveries.map((d) => d.event.person)).toEqual([{ user_id: u.id, custom_profile_field: { id: field, value: null } }]);
    });

    it.each([
      ['an unknown field', () => [{ id: 99999, value: 'x' }], 'Field id 99999 not found.'],
      ['a short text too long', () => [{ id: fields.phone, value: 'x'.repeat(51) }], 'Phone number is too long (limit: 50 characters)'],
      ['a long text too long', () => [{ id: fields.bio, value: 'x'.repeat(501) }], 'Biography is too long (limit: 500 characters)'],
      ['a list for a text field', () => [{ id: fields.pronouns, value: [1] }], 'Pronouns is not a string'],
      ['an unknown choice', () => [{ id: fields.editor, value: 'nano' }], "'nano' is not a valid choice for 'Favorite editor'."],
      ['a badly formed date', () => [{ id: fields.birthday, value: '28/02/1990' }], 'Birthday is not a date'],
      ['a date that does not exist', () => [{ id: fields.birthday, value: '1990-02-30' }], 'Birthday is not a date'],
      ['a URL without a scheme', () => [{ id: fields.website, value: 'example.org' }], 'Website is not a URL'],
      ['a javascript: URL', () => [{ id: fields.website, value: 'javascript:alert(1)' }], 'Website is not a URL'],
      ['a string for a Users field', () => [{ id: fields.mentor, value: 'adam' }], 'User IDs is not a list'],
      ['an unknown user', () => [{ id: fields.mentor, value: [99999] }], 'Invalid user IDs: 99999'],
      [
        'a deactivated user',
        () => [{ id: fields.mentor, value: [t.cast.deactivated.id] }],
        () => `User with ID ${t.cast.deactivated.id} is deactivated`,
      ],
      ['a bot', () => [{ id: fields.mentor, value: [t.cast.bot.id] }], () => `User with ID ${t.cast.bot.id} is a bot`],
    ] as Array<[string, () => unknown, string | (() => string)]>)('refuses %s', async (_what, data, msg) => {
      const u = await freshUser(t);
      await expectRefused('admin', u.id, { profile_data: data() }, typeof msg === 'function' ? msg() : msg);
    });

    it("refuses another organization's field", async () => {
      const stranger = await userOfAnotherRealm(t, `fields${dialect}`);
      const [foreign] = await t.ctx
        .db('custom_profile_fields')
        .insert({ realm_id: stranger.realm_id, name: 'Theirs', field_type: 1, field_data: '' });
      const u = await freshUser(t);
      await expectRefused('admin', u.id, { profile_data: [{ id: Number(foreign), value: 'x' }] }, `Field id ${Number(foreign)} not found.`);
    });

    it('rolls back a clear and a rename when a later value is refused', async () => {
      const u = await freshUser(t);
      await patch('admin', u.id, { profile_data: [{ id: fields.phone, value: 'keep me' }] });
      await expectRefused(
        'admin',
        u.id,
        {
          full_name: 'Half Written',
          role: Role.MODERATOR,
          profile_data: [
            { id: fields.phone, value: null },
            { id: fields.birthday, value: 'soon' },
          ],
        },
        'Birthday is not a date',
      );
      expect((await row(u.id))!.full_name).toBe(u.full_name);
    });
  });

  describe('new_email', () => {
    beforeAll(() => t.ctx.db('users').where({ id: t.cast.owner.id }).update({ can_change_user_emails: true }));
    afterAll(() => t.ctx.db('users').where({ id: t.cast.owner.id }).update({ can_change_user_emails: false }));

    it('changes the address a user logs in with; events by visibility', async () => {
      const u = await freshUser(t);
      const { result: res, deliveries } = await captureEvents(t, () => patch('owner', u.id, { new_email: 'New.Address@example.com' }));
      expect(res.status).toBe(200);
      const r = await row(u.id);
      expect([r!.email, r!.delivery_email, r!.email_key]).toEqual([
        'New.Address@example.com',
        'New.Address@example.com',
        'new.address@example.com',
      ]);
      expect(deliveries.map((d) => d.event.person)).toEqual([
        { user_id: u.id, delivery_email: 'New.Address@example.com' },
        { user_id: u.id, new_email: 'New.Address@example.com' },
      ]);
      const me = await t.api.call(
        'get',
        '/users/me',
        null,
        {},
        { headers: { Authorization: `Basic ${Buffer.from(`new.address@example.com:${u.api_key}`).toString('base64')}` } },
      );
      expect(me.status).toBe(200);
      expect(me.body.user_id).toBe(u.id);
    });

    it('refuses an administrator, and an owner without can_change_user_emails', async () => {
      const u = await freshUser(t);
      await t.ctx.db('users').where({ id: t.cast.admin.id }).update({ can_change_user_emails: true });
      try {
        await expectRefused('admin', u.id, { new_email: 'x1@example.com' }, 'User not authorized to change user emails');
      } finally {
        await t.ctx.db('users').where({ id: t.cast.admin.id }).update({ can_change_user_emails: false });
      }
      await t.ctx.db('users').where({ id: t.cast.owner.id }).update({ can_change_user_emails: false });
      try {
        await expectRefused(
          'owner',
          u.id,
          { new_email: 'x2@example.com', full_name: 'Not This Either' },
          'User not authorized to change user emails',
        );
      } finally {
        await t.ctx.db('users').where({ id: t.cast.owner.id }).update({ can_change_user_emails: true });
      }
    });

    it.each([
      ['an invalid address', 'not an address', 'Invalid address.'],
      ['an address in use', 'MEMBER@example.com', 'Already has an account.'],
      ["a deactivated user's address", 'deactivated@example.com', 'Account has been deactivated.'],
    ])('refuses %s', async (_what, new_email, msg) => {
      const u = await freshUser(t);
      await expectRefused('owner', u.id, { new_email }, msg);
    });
  });

  describe('who and what', () => {
    it("answers No such user for unknown and other organizations' users", async () => {
      const stranger = await userOfAnotherRealm(t, `elsewhere${dialect}`);
      for (const id of [99999, stranger.id]) await expectRefused('admin', id, { full_name: 'Nope Nope' }, 'No such user');
    });

    it('checks the caller before the target', async () => {
      await expectRefused('member', 99999, { full_name: 'Nope Nope' }, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    });

    it('accepts parameters in the query string and reports unknown ones', async () => {
      const u = await freshUser(t);
      const res = await t.api.call('patch', `/users/${u.id}`, t.cast.admin, {}, { query: { full_name: 'Query Person', bogus: 1 } });
      expect(res.status).toBe(200);
      expect(res.body.ignored_parameters_unsupported).toEqual(['bogus']);
      expect((await row(u.id))!.full_name).toBe('Query Person');
    });
  });
});
