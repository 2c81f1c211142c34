import { eachDatabase } from './support/databases';
import type { TestServer } from './support/server';
import { pending, register, startEventsServer, stopEventsServer } from './support/events';
import { captureEvents } from './users-fixtures';

eachDatabase('organization domains', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  type Who = keyof TestServer['cast'];
  const list = async (who: Who = 'guest') => (await t.api.get('/realm/domains', t.cast[who])).body.domains;
  const add = (who: Who, domain: string, allowSubdomains = false) =>
    t.api.post('/realm/domains', t.cast[who], { domain, allow_subdomains: allowSubdomains });
  const auditRows = async (type: number) =>
    (await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: type }).orderBy('id')).map((r) =>
      typeof r.extra_data === 'string' ? JSON.parse(r.extra_data) : r.extra_data,
    );

  /** A refused request: exactly this error, the domains unchanged, nothing announced. */
  const expectRefused = async (request: () => Promise<{ status: number; body: unknown }>, msg: string, code = 'BAD_REQUEST') => {
    const before = await t.ctx.db('realm_domains').orderBy('id');
    const { result: res, deliveries } = await captureEvents(t, request);
    expect(res.body).toEqual({ result: 'error', msg, code });
    expect(res.status).toBe(400);
    expect(await t.ctx.db('realm_domains').orderBy('id')).toEqual(before);
    expect(deliveries).toEqual([]);
  };

  it('starts empty, for every user and in register', async () => {
    expect(await list('guest')).toEqual([]);
    expect((await register(t, t.cast.member)).state.realm_domains).toEqual([]);
  });

  it('an administrator adds a domain (trimmed, lower-cased): announced to every active user, audited, in register', async () => {
    const guest = await register(t, t.cast.guest, { event_types: ['realm_domains'] });
    const { result: res, deliveries } = await captureEvents(t, () => add('admin', '  Example.COM '));
    expect(res.status).toBe(200);
    const id = Number((await t.ctx.db('realm_domains').where({ domain: 'example.com' }).first())!.id);
    expect(res.body).toEqual({ result: 'success', msg: '', new_domain: [id, 'example.com'] });
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm_domains', op: 'add', realm_domain: { domain: 'example.com', allow_subdomains: false } },
    ]);
    expect(deliveries[0]!.userIds).toEqual(expect.arrayContaining([t.cast.guest.id, t.cast.bot.id, t.cast.owner.id]));
    expect(deliveries[0]!.userIds).not.toContain(t.cast.deactivated.id);
    expect(await pending(t, guest)).toEqual([expect.objectContaining({ type: 'realm_domains', op: 'add' })]);
    expect(await auditRows(218)).toEqual([
      {
        realm_domains: [{ domain: 'example.com', allow_subdomains: false }],
        added_domain: { domain: 'example.com', allow_subdomains: false },
      },
    ]);
    expect(await list('member')).toEqual([{ domain: 'example.com', allow_subdomains: false }]);
    expect((await register(t, t.cast.guest)).state.realm_domains).toEqual([{ domain: 'example.com', allow_subdomains: false }]);
  });

  it.each([
    ['', "Invalid domain: Domain can't be empty."],
    ['localhost', 'Invalid domain: Domain must have at least one dot (.)'],
    [`${'a'.repeat(250)}.example`, 'Invalid domain: Domain is too long'],
    ['.example.org', 'Invalid domain: Domain cannot start or end with a dot (.)'],
    ['example..org', "Invalid domain: Consecutive '.' are not allowed."],
    ['-bad.org', "Invalid domain: Subdomains cannot start or end with a '-'."],
    ['bad_name.org', "Invalid domain: Domain can only have letters, numbers, '.' and '-'s."],
    ['EXAMPLE.com', 'The domain example.com is already a part of your organization.'],
  ])('refuses to add %j', async (domain, msg) => {
    await expectRefused(() => add('owner', domain), msg);
  });

  it.each(['moderator', 'member', 'guest'] as const)('refuses a %s every change', async (who) => {
    const admin = 'Must be an organization administrator';
    await expectRefused(() => add(who, 'other.org'), admin, 'UNAUTHORIZED_PRINCIPAL');
    await expectRefused(
      () => t.api.patch('/realm/domains/example.com', t.cast[who], { allow_subdomains: true }),
      admin,
      'UNAUTHORIZED_PRINCIPAL',
    );
    await expectRefused(() => t.api.delete('/realm/domains/example.com', t.cast[who]), admin, 'UNAUTHORIZED_PRINCIPAL');
  });

  it('changes allow_subdomains, and says when there is no such domain', async () => {
    const { result: res, deliveries } = await captureEvents(t, () =>
      t.api.patch('/realm/domains/example.com', t.cast.admin, { allow_subdomains: true }),
    );
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm_domains', op: 'change', realm_domain: { domain: 'example.com', allow_subdomains: true } },
    ]);
    expect((await auditRows(219)).at(-1)).toEqual({
      realm_domains: [{ domain: 'example.com', allow_subdomains: true }],
      changed_domain: { domain: 'example.com', allow_subdomains: true },
    });
    await expectRefused(
      () => t.api.patch('/realm/domains/example.net', t.cast.admin, { allow_subdomains: true }),
      'No entry found for domain example.net.',
    );
    await expectRefused(() => t.api.delete('/realm/domains/example.net', t.cast.admin), 'No entry found for domain example.net.');
    expect((await t.api.patch('/realm/domains/example.com', t.cast.admin, {})).body).toEqual({
      result: 'error',
      msg: "Missing 'allow_subdomains' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'allow_subdomains',
    });
  });

  it('restricts invitation sign-ups to the domains, subdomains only where allowed', async () => {
    expect((await t.api.patch('/realm', t.cast.owner, { emails_restricted_to_domains: true })).status).toBe(200);
    await add('admin', 'exact.org', false);
    const keyOf = (link: string) => /\/join\/([a-z0-9]+)\/$/.exec(link)![1]!;
    const join = async (email: string) => {
      const key = keyOf((await t.api.post('/invites/multiuse', t.cast.admin, {})).body.invite_link);
      return t.api.post(`/invites/multiuse/${key}/accept`, null, { email, password: 'a-good-password', full_name: 'New Comer' });
    };
    const refusal = (email: string) => ({
      result: 'error',
      msg: `Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`,
      code: 'BAD_REQUEST',
    });
    expect((await join('someone@elsewhere.net')).body).toEqual(refusal('someone@elsewhere.net'));
    expect((await join('someone@sub.exact.org')).body).toEqual(refusal('someone@sub.exact.org'));
    expect((await join('someone@exact.org')).status).toBe(200);
    expect((await join('someone@deep.sub.example.com')).status).toBe(200);
  });

  it('removing the last domain lifts the restriction, with its own realm event and audit row', async () => {
    expect((await t.api.delete('/realm/domains/exact.org', t.cast.admin)).status).toBe(200);
    const { result: res, deliveries } = await captureEvents(t, () => t.api.delete('/realm/domains/example.com', t.cast.admin));
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm', op: 'update', property: 'emails_restricted_to_domains', value: false },
      { type: 'realm_domains', op: 'remove', domain: 'example.com' },
    ]);
    expect((await auditRows(220)).at(-1)).toEqual({ realm_domains: [], removed_domain: { domain: 'example.com', allow_subdomains: true } });
    expect((await auditRows(207)).at(-1)).toEqual({ old_value: true, new_value: false, property: 'emails_restricted_to_domains' });
    expect((await t.ctx.db('realms').where({ id: t.realmId }).first())!.emails_restricted_to_domains).toBeFalsy();
    expect((await register(t, t.cast.member)).state).toMatchObject({ realm_domains: [], realm_emails_restricted_to_domains: false });
  });
});
