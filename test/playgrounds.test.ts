import type { UserRow } from '../src/queries/rows';
import { AuditEventType } from '../src/domain/audit';
import { eachDatabase } from './support/databases';
import { pending, register, startEventsServer, stopEventsServer } from './support/events';
import type { TestServer } from './support/server';

const PYTHON = { name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com/?code={code}' };

eachDatabase('code playgrounds', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(async () => {
    await stopEventsServer(t);
  });
  beforeEach(async () => {
    await t.ctx.db('realm_playgrounds').delete();
  });

  const add = (user: UserRow, fields: Record<string, unknown>) => t.api.post('/realm/playgrounds', user, fields);
  const state = async () => (await register(t, t.cast.guest, { fetch_event_types: ['realm_playgrounds'] })).state.realm_playgrounds;
  const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
  const invalid = (field: string, msg: string) => ({ ...error(msg), errors: { [field]: [msg] } });

  it.each([
    ['owner', 200],
    ['admin', 200],
    ['moderator', 400],
    ['member', 400],
    ['guest', 400],
  ] as const)('%s adding a playground: %i', async (role, status) => {
    const res = await add(t.cast[role], PYTHON);
    expect(res.status).toBe(status);
    if (status === 200) expect(await state()).toEqual([{ id: res.body.id, ...PYTHON }]);
    else {
      expect(res.body).toEqual(error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
      expect(await state()).toEqual([]);
    }
  });

  it.each([
    [{ ...PYTHON, pygments_language: 'x'.repeat(41) }, error('pygments_language is too long (limit: 40 characters)')],
    [{ ...PYTHON, pygments_language: 'py<thon>' }, error('Invalid characters in pygments language')],
    [{ ...PYTHON, name: '  ' }, invalid('name', 'This field cannot be blank.')],
    [{ ...PYTHON, url_template: 'https://x.example/{code' }, invalid('url_template', 'Invalid URL template.')],
    [{ ...PYTHON, url_template: 'https://x.example/' }, invalid('__all__', 'Missing the required variable "code" in the URL template')],
    [
      { ...PYTHON, url_template: 'https://x.example/{code}{x}' },
      invalid('__all__', '"code" should be the only variable present in the URL template'),
    ],
  ])('refuses %j', async (fields, body) => {
    const res = await add(t.cast.admin, fields);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(body);
  });

  it('refuses a second playground of one language and name, trimming both', async () => {
    expect((await add(t.cast.admin, PYTHON)).status).toBe(200);
    const res = await add(t.cast.admin, { ...PYTHON, name: ` ${PYTHON.name} `, url_template: 'https://other.example/{code}' });
    expect(res.body).toEqual(invalid('__all__', 'Realm playground with this Realm, Pygments language and Name already exists.'));
    expect((await add(t.cast.admin, { ...PYTHON, name: 'Another' })).status).toBe(200);
  });

  it('removes a playground (administrators only); a missing one answers "Invalid playground"', async () => {
    const id = (await add(t.cast.admin, PYTHON)).body.id as number;
    for (const role of ['moderator', 'member', 'guest'] as const) {
      expect((await t.api.delete(`/realm/playgrounds/${id}`, t.cast[role])).body).toEqual(
        error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'),
      );
    }
    expect((await t.api.delete(`/realm/playgrounds/${id + 1}`, t.cast.admin)).body).toEqual(error('Invalid playground'));
    expect((await t.api.delete(`/realm/playgrounds/${id}`, t.cast.admin)).body).toEqual({ result: 'success', msg: '' });
    expect(await state()).toEqual([]);
  });

  it('sends the whole list to every active user and writes audit rows', async () => {
    const clients = [];
    for (const role of ['owner', 'admin', 'moderator', 'member', 'guest'] as const) {
      clients.push(await register(t, t.cast[role], { event_types: ['realm_playgrounds'] }));
    }
    const id = (await add(t.cast.admin, PYTHON)).body.id as number;
    for (const c of clients) {
      expect((await pending(t, c)).map(({ id: _id, ...e }) => e)).toEqual([
        { type: 'realm_playgrounds', realm_playgrounds: [{ id, ...PYTHON }] },
      ]);
    }
    await t.api.delete(`/realm/playgrounds/${id}`, t.cast.owner);
    for (const c of clients)
      expect((await pending(t, c)).map(({ id: _id, ...e }) => e)).toEqual([{ type: 'realm_playgrounds', realm_playgrounds: [] }]);
    const rows = async (type: number) =>
      (await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: type }).orderBy('id')).map((r) => ({
        actor: Number(r.acting_user_id),
        extra: JSON.parse(String(r.extra_data)),
      }));
    expect((await rows(AuditEventType.REALM_PLAYGROUND_ADDED)).slice(-1)).toEqual([
      { actor: t.cast.admin.id, extra: { realm_playgrounds: [{ id, ...PYTHON }], added_playground: { id, ...PYTHON } } },
    ]);
    expect((await rows(AuditEventType.REALM_PLAYGROUND_REMOVED)).slice(-1)).toEqual([
      { actor: t.cast.owner.id, extra: { realm_playgrounds: [], removed_playground: PYTHON } },
    ]);
  });
});
