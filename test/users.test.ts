import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import { CAST_PASSWORD, startTestServer, TestServer } from './support/server';

eachDatabase('users', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  describe('GET /users/me', () => {
    it('returns every field of the own-user record', async () => {
      const res = await t.api.get('/users/me', t.cast.admin);
      expect(res.status).toBe(200);
      const me = res.body;
      expect(me).toMatchObject({
        result: 'success',
        msg: '',
        user_id: t.cast.admin.id,
        email: 'admin@example.com',
        delivery_email: 'admin@example.com',
        full_name: 'Test Admin',
        is_admin: true,
        is_owner: false,
        is_guest: false,
        is_bot: false,
        is_active: true,
        is_imported_stub: false,
        role: 200,
        timezone: '',
        max_message_id: -1,
        profile_data: {},
      });
      expect(me.avatar_url).toMatch(/^https:\/\//);
      expect(me.avatar_version).toBe(1);
      expect(new Date(me.date_joined).getTime()).toBeGreaterThan(Date.now() - 3600_000);
      expect(me).not.toHaveProperty('is_billing_admin');
    });

    it('reports role flags per role', async () => {
      const owner = (await t.api.get('/users/me', t.cast.owner)).body;
      expect([owner.role, owner.is_owner, owner.is_admin]).toEqual([100, true, true]);
      const guest = (await t.api.get('/users/me', t.cast.guest)).body;
      expect([guest.role, guest.is_guest, guest.is_admin]).toEqual([600, true, false]);
      const mod = (await t.api.get('/users/me', t.cast.moderator)).body;
      expect([mod.role, mod.is_admin]).toEqual([300, false]);
    });

    it('gives bots bot fields and no profile_data', async () => {
      const bot = (await t.api.get('/users/me', t.cast.bot)).body;
      expect(bot.is_bot).toBe(true);
      expect(bot.bot_type).toBe(1);
      expect(bot).not.toHaveProperty('profile_data');
    });
  });

  describe('POST /users', () => {
    const countUsers = async () => Number((await t.ctx.db('users').count({ n: '*' }).first())!.n);

    it('creates a user, sent urlencoded', async () => {
      const res = await t.api.post('/users', t.cast.owner, {
        email: 'new.person@example.com',
        password: 'a-long-password',
        full_name: 'New Person',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '', user_id: expect.any(Number) });
      const row = await t.ctx.db('users').where({ id: res.body.user_id }).first();
      expect(row!.full_name).toBe('New Person');
      expect(row!.role).toBe(400);
      expect(row!.password_hash).toMatch(/^scrypt\$/);
      expect(row!.password_hash).not.toContain('a-long-password');
      // A member joins role:members (and role:fullmembers, the waiting period being 0).
      const groups = await t.ctx
        .db('group_members as gm')
        .join('user_groups as g', 'g.id', 'gm.group_id')
        .where('gm.user_id', res.body.user_id)
        .pluck('g.name');
      expect(groups.sort()).toEqual(['role:fullmembers', 'role:members']);
    });

    it('creates a user, sent multipart, who can then log in with the password', async () => {
      const res = await t.api.call(
        'post',
        '/users',
        t.cast.admin,
        {
          email: 'multi.part@example.com',
          password: 'another-password',
          full_name: 'Multi Part',
        },
        { multipart: true },
      );
      expect(res.status).toBe(200);
      const login = await t.api.post('/fetch_api_key', null, { username: 'multi.part@example.com', password: 'another-password' });
      expect(login.status).toBe(200);
      expect(login.body.user_id).toBe(res.body.user_id);
      expect(login.body.api_key).toHaveLength(32);
    });

    it("refuses an address the organization does not take: disposable, outside its domains, with '+'", async () => {
      const before = await countUsers();
      const create = (email: string) => t.api.post('/users', t.cast.owner, { email, password: 'a-long-password', full_name: 'New Person' });
      // The system bots' domain: nobody may take Notification Bot's or the Email Gateway's address first.
      expect((await create('emailgateway@parley.invalid')).body).toEqual({
        result: 'error',
        msg: 'emailgateway@parley.invalid is reserved for system bots',
        code: 'BAD_REQUEST',
      });
      expect((await create('new.person@mailinator.com')).body).toEqual({
        result: 'error',
        msg: 'Disposable email addresses are not allowed in this organization',
        code: 'BAD_REQUEST',
      });
      await t.ctx.db('realms').where({ id: t.realmId }).update({ emails_restricted_to_domains: true });
      await t.ctx.db('realm_domains').insert({ realm_id: t.realmId, domain: 'example.com', allow_subdomains: false });
      try {
        expect((await create('new.person@example.org')).body).toEqual({
          result: 'error',
          msg: "Email 'new.person@example.org' not allowed in this organization",
          code: 'BAD_REQUEST',
        });
        expect((await create('new+person@example.com')).body).toEqual({
          result: 'error',
          msg: 'Email addresses containing + are not allowed.',
          code: 'BAD_REQUEST',
        });
      } finally {
        await t.ctx.db('realm_domains').where({ realm_id: t.realmId }).del();
        await t.ctx.db('realms').where({ id: t.realmId }).update({ emails_restricted_to_domains: false });
      }
      expect(await countUsers()).toBe(before);
    });

    it('refuses an address already in use, whatever its case, and writes nothing', async () => {
      const before = await countUsers();
      const res = await t.api.post('/users', t.cast.owner, {
        email: 'MEMBER@Example.com',
        password: 'a-long-password',
        full_name: 'Someone Else',
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: "Email 'MEMBER@Example.com' already in use", code: 'BAD_REQUEST' });
      expect(await countUsers()).toBe(before);
    });

    it.each([
      ['member', 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'],
      ['moderator', 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'],
      ['guest', 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'],
      ['bot', 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'],
    ] as const)('refuses a %s', async (who, code, msg) => {
      const before = await countUsers();
      const res = await t.api.post('/users', t.cast[who], {
        email: `by-${who}@example.com`,
        password: 'a-long-password',
        full_name: 'Nope Nope',
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg, code });
      expect(await countUsers()).toBe(before);
    });

    it('refuses an administrator without can_create_users', async () => {
      await t.ctx.db('users').where({ id: t.cast.admin.id }).update({ can_create_users: false });
      try {
        const res = await t.api.post('/users', t.cast.admin, { email: 'x1@example.com', password: 'a-long-password', full_name: 'X One' });
        expect([res.status, res.body]).toEqual([400, { result: 'error', msg: 'User not authorized to create users', code: 'BAD_REQUEST' }]);
      } finally {
        await t.ctx.db('users').where({ id: t.cast.admin.id }).update({ can_create_users: true });
      }
    });

    it('refuses a deactivated caller with 401', async () => {
      const res = await t.api.post('/users', t.cast.deactivated, {
        email: 'x2@example.com',
        password: 'a-long-password',
        full_name: 'X Two',
      });
      expect([res.status, res.body]).toEqual([401, { result: 'error', msg: 'Account is deactivated', code: 'UNAUTHORIZED' }]);
    });

    it.each([
      ['a name too long', { full_name: 'n'.repeat(101) }, 'Name too long!'],
      ['a name too short', { full_name: ' a ' }, 'Name too short!'],
      ['a name with forbidden characters', { full_name: 'Bad *Name*' }, 'Invalid characters in name!'],
      ['an invalid email', { email: 'not-an-email' }, 'Bad name or username'],
      ['a weak password', { password: '123' }, 'The password is too weak.'],
    ])('refuses %s', async (_what, override, msg) => {
      const before = await countUsers();
      const res = await t.api.post('/users', t.cast.owner, {
        email: 'valid.person@example.com',
        password: 'a-long-password',
        full_name: 'Valid Person',
        ...override,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg, code: 'BAD_REQUEST' });
      expect(await countUsers()).toBe(before);
    });

    it('emits realm_user add to active users after commit', async () => {
      const seen: unknown[] = [];
      const off = t.ctx.bus.subscribe((d) => seen.push(d));
      try {
        const res = await t.api.post('/users', t.cast.owner, {
          email: 'evented@example.com',
          password: 'a-long-password',
          full_name: 'Evented One',
        });
        expect(res.status).toBe(200);
        expect(seen).toHaveLength(1);
        const d = seen[0] as { event: any; userIds: number[] };
        expect(d.event).toMatchObject({ type: 'realm_user', op: 'add', person: { user_id: res.body.user_id, full_name: 'Evented One' } });
        expect(d.userIds).toContain(t.cast.member.id);
        expect(d.userIds).not.toContain(t.cast.deactivated.id);
      } finally {
        off();
      }
    });
  });

  describe('POST /fetch_api_key', () => {
    it('returns the API key for the right password', async () => {
      const res = await t.api.post('/fetch_api_key', null, { username: 'moderator@example.com', password: CAST_PASSWORD });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        result: 'success',
        msg: '',
        api_key: t.cast.moderator.api_key,
        email: 'moderator@example.com',
        user_id: t.cast.moderator.id,
      });
    });

    it('answers a wrong password and an unknown address alike', async () => {
      const wrong = await t.api.post('/fetch_api_key', null, { username: 'guest@example.com', password: 'nope-nope' });
      const unknown = await t.api.post('/fetch_api_key', null, { username: 'ghost@example.com', password: 'nope-nope' });
      for (const res of [wrong, unknown]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' });
      }
    });

    it("moves an API-made account's date_joined to its first login, with a realm_user update (feature level 475)", async () => {
      const made = await t.api.post('/users', t.cast.owner, {
        email: 'first.login@example.com',
        password: 'a-long-password',
        full_name: 'First Login',
      });
      const id = made.body.user_id as number;
      // Created a while ago: the creation time is what everyone sees until the first login.
      await t.ctx.db('users').where({ id }).update({ date_joined: 1_700_000_000 });
      const joinedOf = async () => (await t.api.get(`/users/${id}`, t.cast.member)).body.user.date_joined;
      expect(await joinedOf()).toBe('2023-11-14T22:13:20.000+00:00');
      const owner = await register(t, t.cast.owner, { event_types: ['realm_user'] });
      const before = Math.floor(Date.now() / 1000);
      const login = await t.api.post('/fetch_api_key', null, { username: 'first.login@example.com', password: 'a-long-password' });
      const after = Math.ceil(Date.now() / 1000);
      expect(login.status).toBe(200);
      const joined = await joinedOf();
      const seconds = Date.parse(joined) / 1000;
      expect(seconds).toBeGreaterThanOrEqual(before);
      expect(seconds).toBeLessThanOrEqual(after);
      expect(joined).toMatch(/\+00:00$/);
      expect(await pending(t, owner)).toEqual([
        { id: expect.any(Number), type: 'realm_user', op: 'update', person: { user_id: id, date_joined: joined } },
      ]);
      // Only the first login counts.
      await t.ctx.db('users').where({ id }).update({ date_joined: 1_700_000_000 });
      expect((await t.api.post('/fetch_api_key', null, { username: 'first.login@example.com', password: 'a-long-password' })).status).toBe(
        200,
      );
      expect(await joinedOf()).toBe('2023-11-14T22:13:20.000+00:00');
      expect(await pending(t, owner)).toEqual([]);
    });

    it('leaves the date_joined of an account its owner made alone, and a failed login changes nothing', async () => {
      const joined = (await t.api.get(`/users/${t.cast.guest.id}`, t.cast.owner)).body.user.date_joined;
      const owner = await register(t, t.cast.owner, { event_types: ['realm_user'] });
      expect((await t.api.post('/fetch_api_key', null, { username: 'guest@example.com', password: CAST_PASSWORD })).status).toBe(200);
      const made = await t.api.post('/users', t.cast.owner, {
        email: 'not.yet@example.com',
        password: 'a-long-password',
        full_name: 'Not Yet',
      });
      await t.ctx.db('users').where({ id: made.body.user_id }).update({ date_joined: 1_700_000_000 });
      expect((await t.api.post('/fetch_api_key', null, { username: 'not.yet@example.com', password: 'wrong-password' })).status).toBe(401);
      expect((await t.api.get(`/users/${t.cast.guest.id}`, t.cast.owner)).body.user.date_joined).toBe(joined);
      expect((await t.api.get(`/users/${made.body.user_id}`, t.cast.owner)).body.user.date_joined).toBe('2023-11-14T22:13:20.000+00:00');
      expect((await pending(t, owner)).filter((e) => e.op === 'update')).toEqual([]);
    });

    it('tells a deactivated user who knows the password', async () => {
      const res = await t.api.post('/fetch_api_key', null, { username: 'deactivated@example.com', password: CAST_PASSWORD });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
    });
  });

  describe('GET /server_settings', () => {
    it('describes the server without authentication', async () => {
      const res = await t.api.get('/server_settings', null);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        result: 'success',
        zulip_feature_level: expect.any(Number),
        realm_name: 'Test Organization',
        email_auth_enabled: true,
        require_email_format_usernames: true,
        external_authentication_methods: [],
      });
      expect(res.body.realm_url).toBe(res.body.realm_uri);
    });
  });
});
