import { FieldType } from '../src/domain/profile-fields';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';
import { createProfileField, freshUser, systemGroupId, userOfAnotherRealm } from './users-fixtures';

eachDatabase('reading users', (dialect) => {
  let t: TestServer;
  let phone: number;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    phone = await createProfileField(t, 'Phone number', FieldType.SHORT_TEXT);
    await t.ctx
      .db('custom_profile_values')
      .insert({ user_id: t.cast.member.id, field_id: phone, value: '555', rendered_value: '<p>555</p>' });
  });
  afterAll(() => t.close());

  describe('GET /users/me', () => {
    it('gives the newest message received and the profile field values, in field order', async () => {
      const second = await createProfileField(t, 'Pronouns', FieldType.SHORT_TEXT);
      await t.ctx
        .db('custom_profile_values')
        .insert({ user_id: t.cast.member.id, field_id: second, value: 'they', rendered_value: '<p>they</p>' });
      try {
        const sent = await t.api.post('/messages', t.cast.owner, { type: 'direct', to: [t.cast.member.id], content: 'newest' });
        const me = (await t.api.get('/users/me', t.cast.member)).body;
        expect(me.max_message_id).toBe(sent.body.id);
        expect(Object.keys(me.profile_data)).toEqual([String(phone), String(second)]);
        expect(me.profile_data[second]).toEqual({ value: 'they', rendered_value: '<p>they</p>' });
        // Someone else's values are not theirs.
        expect((await t.api.get('/users/me', t.cast.admin)).body.profile_data).toEqual({});
      } finally {
        await t.ctx.db('custom_profile_values').where({ field_id: second }).del();
      }
    });
  });

  describe('GET /users', () => {
    it('lists every user and bot, deactivated ones too, by ID', async () => {
      const res = await t.api.get('/users', t.cast.member);
      expect(res.status).toBe(200);
      const ids = res.body.members.map((m: any) => m.user_id);
      expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
      for (const u of Object.values(t.cast)) expect(ids).toContain(u.id);
      const byId = new Map(res.body.members.map((m: any) => [m.user_id, m]));
      expect(byId.get(t.cast.deactivated.id)).toMatchObject({ is_active: false });
      expect(byId.get(t.cast.bot.id)).toMatchObject({ is_bot: true, bot_type: 1, bot_owner_id: null, delivery_email: 'bot@example.com' });
      expect(byId.get(t.cast.owner.id)).toMatchObject({ role: 100, is_owner: true, is_admin: true, full_name: 'Test Owner' });
      expect(byId.get(t.cast.member.id)).not.toHaveProperty('profile_data');
    });

    it('gives profile_data to humans only with include_custom_profile_fields', async () => {
      const res = await t.api.get('/users', t.cast.guest, { include_custom_profile_fields: true });
      const byId = new Map(res.body.members.map((m: any) => [m.user_id, m]));
      expect((byId.get(t.cast.member.id) as any).profile_data).toEqual({ [phone]: { value: '555', rendered_value: '<p>555</p>' } });
      expect((byId.get(t.cast.admin.id) as any).profile_data).toEqual({});
      expect(byId.get(t.cast.bot.id)).not.toHaveProperty('profile_data');
    });

    it('leaves avatar_url null with client_gravatar (the default) only where the email is visible', async () => {
      await t.ctx
        .db('users')
        .where({ id: t.cast.moderator.id })
        .update({ settings: JSON.stringify({ email_address_visibility: 3 }) });
      try {
        const byDefault = await t.api.get('/users', t.cast.member);
        const m = new Map(byDefault.body.members.map((u: any) => [u.user_id, u])) as Map<number, any>;
        expect(m.get(t.cast.admin.id).avatar_url).toBeNull();
        expect(m.get(t.cast.moderator.id).avatar_url).toMatch(/^https:/);
        expect(m.get(t.cast.moderator.id).delivery_email).toBeNull();
        const asAdmin = new Map((await t.api.get('/users', t.cast.admin)).body.members.map((u: any) => [u.user_id, u])) as Map<number, any>;
        expect(asAdmin.get(t.cast.moderator.id).delivery_email).toBe('moderator@example.com');
        const off = await t.api.get('/users', t.cast.member, { client_gravatar: false });
        expect(off.body.members.every((u: any) => typeof u.avatar_url === 'string')).toBe(true);
      } finally {
        await t.ctx.db('users').where({ id: t.cast.moderator.id }).update({ settings: '{}' });
      }
    });

    it('lists only the users of user_ids, skipping IDs of nobody and of other organizations (feature level 384)', async () => {
      const stranger = await userOfAnotherRealm(t, `idsother${dialect}`);
      const { admin, bot, deactivated, member } = t.cast;
      const res = await t.api.get('/users', t.cast.guest, {
        user_ids: [deactivated.id, 99999, member.id, bot.id, stranger.id, member.id],
        include_custom_profile_fields: true,
        client_gravatar: false,
      });
      expect(res.status).toBe(200);
      expect(res.body.members.map((m: any) => m.user_id)).toEqual([member.id, bot.id, deactivated.id].sort((a, b) => a - b));
      const byId = new Map(res.body.members.map((m: any) => [m.user_id, m])) as Map<number, any>;
      // The other parameters apply as without user_ids.
      expect(byId.get(member.id).profile_data).toEqual({ [phone]: { value: '555', rendered_value: '<p>555</p>' } });
      expect(byId.get(bot.id)).not.toHaveProperty('profile_data');
      expect(byId.get(deactivated.id)).toMatchObject({ is_active: false, profile_data: {} });
      expect(typeof byId.get(member.id).avatar_url).toBe('string');
      const one = await t.api.get('/users', t.cast.member, { user_ids: [admin.id] });
      expect(one.body.members).toEqual([(await t.api.get(`/users/${admin.id}`, t.cast.member)).body.user]);
      expect((await t.api.get('/users', t.cast.member, { user_ids: [] })).body.members).toEqual([]);
    });

    it("refuses a user_ids that is not a list of IDs in Zulip's words", async () => {
      const cases: Array<[unknown, string]> = [
        ['[1,', 'user_ids is not valid JSON'],
        [{ a: 1 }, 'user_ids is not a list'],
        [['x'], 'user_ids[0] is not an integer'],
      ];
      for (const [value, msg] of cases) {
        const res = await t.api.get('/users', t.cast.member, { user_ids: value });
        expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code: 'BAD_REQUEST' }]);
      }
    });

    it("refuses a non-boolean flag in Zulip's words", async () => {
      const res = await t.api.get('/users', t.cast.member, { client_gravatar: 'maybe' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'client_gravatar is not a boolean', code: 'BAD_REQUEST' });
    });
  });

  describe('GET /users/{user_id}', () => {
    it('returns one user, a bot or a deactivated user', async () => {
      for (const u of [t.cast.member, t.cast.bot, t.cast.deactivated]) {
        const res = await t.api.get(`/users/${u.id}`, t.cast.guest, { client_gravatar: false });
        expect(res.status).toBe(200);
        expect(res.body.user).toMatchObject({ user_id: u.id, email: u.email, is_active: u.is_active, is_bot: u.is_bot });
        expect(typeof res.body.user.avatar_url).toBe('string');
      }
      const withFields = await t.api.get(`/users/${t.cast.member.id}`, t.cast.bot, { include_custom_profile_fields: true });
      expect(withFields.body.user.profile_data).toEqual({ [phone]: { value: '555', rendered_value: '<p>555</p>' } });
    });

    it("answers No such user for unknown IDs and other organizations' users", async () => {
      const stranger = await userOfAnotherRealm(t, `readother${dialect}`);
      for (const id of [99999, stranger.id]) {
        const res = await t.api.get(`/users/${id}`, t.cast.member);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: 'error', msg: 'No such user', code: 'BAD_REQUEST' });
      }
    });
  });

  describe('guests outside can_access_all_users_group', () => {
    beforeAll(async () => {
      const members = await systemGroupId(t, 'role:members');
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: members });
      await createChannel(t, 'guest-room', [t.cast.guest, t.cast.moderator]);
    });
    afterAll(async () => {
      const everyone = await systemGroupId(t, 'role:everyone');
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: everyone });
    });

    it('see themselves, bots and the people they share a channel with', async () => {
      const res = await t.api.get('/users', t.cast.guest);
      const ids = res.body.members.map((m: any) => m.user_id).sort();
      expect(ids).toEqual([t.cast.guest.id, t.cast.bot.id, t.cast.moderator.id].sort());
      const member = await t.api.get('/users', t.cast.member);
      expect(member.body.members.length).toBeGreaterThan(ids.length);
    });

    it('find user_ids they may not see left out, as the whole list leaves them out', async () => {
      const { admin, bot, guest, moderator } = t.cast;
      const asked = [admin.id, moderator.id, bot.id, guest.id];
      const res = await t.api.get('/users', guest, { user_ids: asked });
      expect(res.body.members.map((m: any) => m.user_id)).toEqual([moderator.id, bot.id, guest.id].sort((a, b) => a - b));
      const member = await t.api.get('/users', t.cast.member, { user_ids: asked });
      expect(member.body.members.map((m: any) => m.user_id)).toEqual([...asked].sort((a, b) => a - b));
    });

    it('get Insufficient permission for anyone else', async () => {
      expect((await t.api.get(`/users/${t.cast.moderator.id}`, t.cast.guest)).status).toBe(200);
      const res = await t.api.get(`/users/${t.cast.admin.id}`, t.cast.guest);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
    });
  });

  describe('GET /users/me', () => {
    it('stays complete for a user created through the API', async () => {
      const u = await freshUser(t);
      const res = await t.api.get('/users/me', u);
      expect(Object.keys(res.body).sort()).toEqual([
        'avatar_url',
        'avatar_version',
        'date_joined',
        'delivery_email',
        'email',
        'full_name',
        'is_active',
        'is_admin',
        'is_bot',
        'is_guest',
        'is_imported_stub',
        'is_owner',
        'max_message_id',
        'msg',
        'profile_data',
        'result',
        'role',
        'timezone',
        'user_id',
      ]);
      const mine = await t.api.get('/users/me', t.cast.member);
      expect(mine.body.profile_data).toEqual({ [phone]: { value: '555', rendered_value: '<p>555</p>' } });
    });

    it('gives max_message_id: -1 without messages, then the newest message received', async () => {
      const u = await freshUser(t);
      const before = await t.api.get('/users/me', u);
      expect(before.body).toMatchObject({ max_message_id: -1, profile_data: {} });
      await createChannel(t, 'max-id', [t.cast.owner, u]);
      const sent = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'max-id', topic: 'hi', content: 'hello' });
      expect(sent.status).toBe(200);
      const after = await t.api.get('/users/me', u);
      expect(after.body.max_message_id).toBe(sent.body.id);
      // The member's profile value is theirs alone.
      expect(after.body.profile_data).toEqual({});
    });
  });
});
