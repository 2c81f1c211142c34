import type { UserRow } from '../src/queries/rows';
import { AuditEventType } from '../src/domain/audit';
import { eachDatabase } from './support/databases';
import { pending, register, startEventsServer, stopEventsServer, type Client } from './support/events';
import type { TestServer } from './support/server';

const ISSUE = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' };
/** The reverse-linkifier fields of a linkifier that sets none (feature levels 471 and 478). */
const UNSET = { example_input: null, reverse_template: null, alternative_url_templates: [] };

eachDatabase('linkifiers', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(async () => {
    await stopEventsServer(t);
  });
  beforeEach(async () => {
    await t.ctx.db('realm_linkifiers').delete();
    t.ctx.caches.apply({ kind: 'all' });
  });

  const add = (user: UserRow, fields: Record<string, unknown>) => t.api.post('/realm/filters', user, fields);
  const list = async (user: UserRow = t.cast.member) =>
    (await t.api.get('/realm/linkifiers', user)).body.linkifiers as Array<Record<string, any>>;
  const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
  const invalid = (field: string, msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST', errors: { [field]: [msg] } });
  const addOk = async (fields: Record<string, unknown>) => {
    const res = await add(t.cast.admin, fields);
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const auditRows = async (eventType: number) =>
    (await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: eventType }).orderBy('id')).map((r) => ({
      actor: r.acting_user_id === null ? null : Number(r.acting_user_id),
      extra: JSON.parse(String(r.extra_data)),
    }));

  describe('permissions', () => {
    it.each([
      ['owner', 200],
      ['admin', 200],
      ['moderator', 400],
      ['member', 400],
      ['guest', 400],
    ] as const)('%s adding a linkifier: %i', async (role, status) => {
      const res = await add(t.cast[role], ISSUE);
      expect(res.status).toBe(status);
      if (status === 400) expect(res.body).toEqual(error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
      expect(await list()).toHaveLength(status === 200 ? 1 : 0);
    });

    it.each(['moderator', 'member', 'guest'] as const)('%s may not update, remove or reorder, but may list', async (role) => {
      const id = await addOk(ISSUE);
      const user = t.cast[role];
      const denied = error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
      expect(
        (await t.api.patch(`/realm/filters/${id}`, user, { pattern: '#(?P<id>[0-9a-f]+)', url_template: ISSUE.url_template })).body,
      ).toEqual(denied);
      expect((await t.api.delete(`/realm/filters/${id}`, user)).body).toEqual(denied);
      expect((await t.api.patch('/realm/linkifiers', user, { ordered_linkifier_ids: [id] })).body).toEqual(denied);
      expect(await list(user)).toEqual([{ id, ...ISSUE, ...UNSET }]);
    });
  });

  describe('validation', () => {
    it.each([
      [{ pattern: '  ', url_template: 'https://x.example/' }, invalid('pattern', 'This field cannot be blank.')],
      [{ pattern: '(foo', url_template: 'https://x.example/' }, invalid('__all__', 'Bad regular expression: missing ): (foo')],
      [
        { pattern: 'a{2,1001}', url_template: 'https://x.example/' },
        invalid('__all__', 'Bad regular expression: invalid repetition size: {2,1001}'),
      ],
      [
        { pattern: '(?P<id>\\d+)-(?P<id>\\d+)', url_template: 'https://x.example/{id}' },
        invalid('__all__', 'Bad regular expression: invalid named capture group: (?P<id>'),
      ],
      [
        { pattern: 'ZUL-(?P<id>\\d+)', url_template: '$fgfg' },
        invalid('__all__', "Group 'id' in linkifier pattern is not present in URL template."),
      ],
      [
        { pattern: 'ZUL-(?P<id>\\d+)', url_template: 'https://x.example/{hello}' },
        invalid('__all__', "Group 'hello' in URL template is not present in linkifier pattern."),
      ],
      [
        { pattern: 'ZUL-(?P<id>\\d+)-(?P<hello>\\d+)', url_template: 'https://x.example/{hello}' },
        invalid('__all__', "Group 'id' in linkifier pattern is not present in URL template."),
      ],
      [{ pattern: '#(?P<id>[123])', url_template: '{id' }, invalid('url_template', 'Invalid URL template.')],
      [{ pattern: '#(?P<id>[123])', url_template: 'https://x.example/{//foo}' }, invalid('url_template', 'Invalid URL template.')],
      [{ pattern: '#(?P<id>[123])', url_template: 'https://x.example/{bar++}' }, invalid('url_template', 'Invalid URL template.')],
    ])('refuses %j', async (fields, body) => {
      const res = await add(t.cast.admin, fields);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(body);
    });

    it('refuses a pattern that could backtrack without end, and answers at once', async () => {
      const started = Date.now();
      const res = await add(t.cast.admin, { pattern: '(?P<id>(a|a)+)\\1', url_template: 'https://x.example/{id}' });
      expect(res.status).toBe(400);
      // RE2 has no back-references: Zulip refuses the pattern, in RE2's words.
      expect(res.body).toEqual(invalid('__all__', 'Bad regular expression: invalid escape sequence: \\1'));
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('reports every error by field, the first as msg', async () => {
      const res = await add(t.cast.admin, { pattern: '', url_template: 'https://x.example/{id}' });
      expect(res.body).toEqual({
        ...error('This field cannot be blank.'),
        errors: {
          pattern: ['This field cannot be blank.'],
          __all__: ["Group 'id' in URL template is not present in linkifier pattern."],
        },
      });
    });

    it('accepts the templates Zulip accepts and trims both values', async () => {
      const id = await addOk({
        pattern: ' FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8}) ',
        url_template: ' https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name}{#zone:5} ',
      });
      expect((await list()).find((l) => l.id === id)).toEqual({
        id,
        pattern: 'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8})',
        url_template: 'https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name}{#zone:5}',
        ...UNSET,
      });
    });

    it('accepts the patterns RE2 accepts: flags, Unicode classes, counts above 16', async () => {
      for (const pattern of ['(?i)jira-(?P<id>[0-9]+)', '\\pL{2,40}#(?P<id>\\d+)', '[a-z]{2,40}-(?P<id>\\d{1,20})']) {
        const res = await add(t.cast.admin, { pattern, url_template: 'https://x.example/{id}' });
        expect(res.status).toBe(200);
      }
      expect(await list()).toHaveLength(3);
    });

    it('refuses a second linkifier with the same pattern', async () => {
      await addOk(ISSUE);
      const res = await add(t.cast.admin, { ...ISSUE, url_template: 'https://other.example/{id}' });
      expect(res.body).toEqual(invalid('__all__', 'Realm filter with this Realm and Pattern already exists.'));
    });

    it('answers a missing argument', async () => {
      const res = await add(t.cast.admin, { pattern: ISSUE.pattern });
      expect(res.body).toMatchObject({ code: 'REQUEST_VARIABLE_MISSING', var_name: 'url_template' });
    });
  });

  describe('reverse-linkifier fields (feature levels 471 and 478)', () => {
    const REVERSE = {
      ...ISSUE,
      example_input: ' #1234 ',
      reverse_template: '#{id}',
      alternative_url_templates: JSON.stringify(['https://github.com/zulip/zulip/pull/{id}']),
    };
    const stored = {
      example_input: '#1234',
      reverse_template: '#{id}',
      alternative_url_templates: ['https://github.com/zulip/zulip/pull/{id}'],
    };

    it('stores them, sends them in GET, the event, register and the audit row, and PATCH replaces them', async () => {
      const c = await register(t, t.cast.member, { event_types: ['realm_linkifiers'] });
      const id = await addOk(REVERSE);
      expect(await list()).toEqual([{ id, ...ISSUE, ...stored }]);
      expect((await pending(t, c)).map(({ id: _id, ...e }) => e)).toEqual([
        { type: 'realm_linkifiers', realm_linkifiers: [{ id, ...ISSUE, ...stored }] },
      ]);
      const state = await register(t, t.cast.guest, {
        fetch_event_types: ['realm_linkifiers'],
        client_capabilities: { linkifier_url_template: true },
      });
      expect(state.state.realm_linkifiers).toEqual([{ id, ...ISSUE, ...stored }]);
      expect((await auditRows(AuditEventType.REALM_LINKIFIER_ADDED)).slice(-1)[0]!.extra.added_linkifier).toEqual({
        id,
        ...ISSUE,
        ...stored,
      });
      // PATCH replaces the whole linkifier: what it leaves out is unset.
      expect((await t.api.patch(`/realm/filters/${id}`, t.cast.admin, { ...ISSUE, example_input: '#7' })).status).toBe(200);
      expect(await list()).toEqual([{ id, ...ISSUE, ...UNSET, example_input: '#7' }]);
      expect((await t.api.patch(`/realm/filters/${id}`, t.cast.admin, REVERSE)).status).toBe(200);
      expect(await list()).toEqual([{ id, ...ISSUE, ...stored }]);
    });

    it.each([
      [{ example_input: 'issue 12' }, invalid('example_input', 'The example input does not match the linkifier pattern.')],
      [{ example_input: 'x#12' }, invalid('example_input', 'The example input does not match the linkifier pattern.')],
      [{ reverse_template: '#{id}' }, invalid('example_input', 'An example input is required for a reverse template.')],
      [
        { example_input: '#1', reverse_template: '#{num}' },
        invalid('__all__', "Group 'num' in reverse template is not present in linkifier pattern."),
      ],
      [{ example_input: '#1', reverse_template: '#{id' }, invalid('reverse_template', 'Invalid reverse template.')],
      [
        { alternative_url_templates: JSON.stringify(['https://x.example/{id']) },
        invalid('alternative_url_templates', 'Invalid URL template.'),
      ],
      [
        { alternative_url_templates: JSON.stringify(['https://x.example/{other}']) },
        invalid('__all__', "Group 'other' in alternative URL template is not present in linkifier pattern."),
      ],
    ])('refuses %j', async (fields, body) => {
      const res = await add(t.cast.admin, { ...ISSUE, ...fields });
      expect(res.body).toEqual(body);
      expect(await list()).toEqual([]);
    });

    it('accepts braces written twice in a reverse template, and a blank optional value as none', async () => {
      const id = await addOk({ ...ISSUE, example_input: '#5', reverse_template: '{{#{id}}}' });
      expect((await list())[0]).toMatchObject({ id, reverse_template: '{{#{id}}}' });
      expect(
        (await t.api.patch(`/realm/filters/${id}`, t.cast.admin, { ...ISSUE, example_input: '  ', reverse_template: '' })).status,
      ).toBe(200);
      expect(await list()).toEqual([{ id, ...ISSUE, ...UNSET }]);
    });
  });

  describe('update and remove', () => {
    it('updates a linkifier, keeps its place, and answers a missing one', async () => {
      const a = await addOk(ISSUE);
      const b = await addOk({ pattern: 'PR (?P<id>[0-9]+)', url_template: 'https://x.example/pr/{id}' });
      const res = await t.api.patch(`/realm/filters/${a}`, t.cast.admin, {
        pattern: '#(?P<id>[0-9a-f]+)',
        url_template: 'https://x.example/{id}',
      });
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect((await list()).map((l) => [l.id, l.pattern])).toEqual([
        [a, '#(?P<id>[0-9a-f]+)'],
        [b, 'PR (?P<id>[0-9]+)'],
      ]);
      expect((await t.api.patch(`/realm/filters/${b + 100}`, t.cast.admin, ISSUE)).body).toEqual(error('Linkifier not found.'));
      // Its own pattern is not taken by itself.
      expect(
        (await t.api.patch(`/realm/filters/${b}`, t.cast.admin, { pattern: 'PR (?P<id>[0-9]+)', url_template: 'https://y.example/{id}' }))
          .status,
      ).toBe(200);
      expect(
        (await t.api.patch(`/realm/filters/${b}`, t.cast.admin, { pattern: '#(?P<id>[0-9a-f]+)', url_template: 'https://y.example/{id}' }))
          .body,
      ).toEqual(invalid('__all__', 'Realm filter with this Realm and Pattern already exists.'));
      const bad = await t.api.patch(`/realm/filters/${a}`, t.cast.admin, { pattern: '#(?P<id>[123])', url_template: '{id' });
      expect(bad.body).toEqual(invalid('url_template', 'Invalid URL template.'));
    });

    it('removes a linkifier; a missing one answers "Linkifier not found."', async () => {
      const a = await addOk(ISSUE);
      expect((await t.api.delete(`/realm/filters/${a + 1}`, t.cast.admin)).body).toEqual(error('Linkifier not found.'));
      expect((await t.api.delete(`/realm/filters/${a}`, t.cast.owner)).body).toEqual({ result: 'success', msg: '' });
      expect(await list()).toEqual([]);
    });
  });

  describe('reorder', () => {
    it('sets the order, keeps it for later additions and removals, and checks the list', async () => {
      const ids = [await addOk({ pattern: '1#(?P<id>[123])', url_template: 'https://f.example/foo/{id}' })];
      ids.push(await addOk({ pattern: '2#(?P<id>[123])', url_template: 'https://f.example/bar/{id}' }));
      ids.push(await addOk({ pattern: '3#(?P<id>[123])', url_template: 'https://f.example/baz/{id}' }));
      expect((await list()).map((l) => l.id)).toEqual(ids);
      const reversed = [ids[2]!, ids[1]!, ids[0]!];
      expect((await t.api.patch('/realm/linkifiers', t.cast.admin, { ordered_linkifier_ids: reversed })).status).toBe(200);
      expect((await list()).map((l) => l.id)).toEqual(reversed);
      const added = await addOk({ pattern: '3#123', url_template: 'https://example.com' });
      expect((await list()).map((l) => l.id)).toEqual([...reversed, added]);
      await t.api.delete(`/realm/filters/${ids[1]}`, t.cast.admin);
      expect((await list()).map((l) => l.id)).toEqual([ids[2], ids[0], added]);

      const reorder = (ordered: number[]) => t.api.patch('/realm/linkifiers', t.cast.admin, { ordered_linkifier_ids: ordered });
      expect((await reorder([ids[2]!, ids[2]!, ids[0]!, added])).body).toEqual(
        error('The ordered list must not contain duplicated linkifiers'),
      );
      expect((await reorder([ids[2]!, ids[0]!])).body).toEqual(
        error('The ordered list must enumerate all existing linkifiers exactly once'),
      );
      expect((await reorder([ids[2]!, ids[0]!, added, ids[1]!])).body).toEqual(
        error('The ordered list must enumerate all existing linkifiers exactly once'),
      );
      expect((await list()).map((l) => l.id)).toEqual([ids[2], ids[0], added]);
    });

    it('accepts the empty list without linkifiers, writing no audit row', async () => {
      const before = (await auditRows(AuditEventType.REALM_LINKIFIERS_REORDERED)).length;
      expect((await t.api.patch('/realm/linkifiers', t.cast.admin, { ordered_linkifier_ids: [] })).status).toBe(200);
      expect(await auditRows(AuditEventType.REALM_LINKIFIERS_REORDERED)).toHaveLength(before);
    });
  });

  describe('caches', () => {
    it("a change drops the organization's compiled linkifiers on every write, and not its users or callers", async () => {
      const caches = t.ctx.caches;
      const fill = async () => {
        expect((await t.api.get('/users/me', t.cast.member)).status).toBe(200);
        await caches.users.getMany([t.cast.member.id, t.cast.admin.id]);
        await caches.linkifiers.get(t.realmId);
      };
      const cached = () => ({
        caller: caches.callers.cache.peek(t.cast.member.api_key) !== undefined,
        users: caches.users.cache.peek(t.cast.member.id) !== undefined && caches.users.cache.peek(t.cast.admin.id) !== undefined,
        linkifiers: caches.linkifiers.cache.peek(t.realmId) !== undefined,
      });
      await fill();
      expect(cached()).toEqual({ caller: true, users: true, linkifiers: true });
      const id = await addOk(ISSUE);
      expect(cached()).toEqual({ caller: true, users: true, linkifiers: false });
      // The next render reads the new list.
      expect((await caches.linkifiers.get(t.realmId)).map((l) => l.id)).toEqual([id]);

      const writes: Array<() => Promise<unknown>> = [
        () => t.api.patch(`/realm/filters/${id}`, t.cast.admin, { pattern: '#(?P<id>[0-9a-f]+)', url_template: ISSUE.url_template }),
        () => t.api.patch('/realm/linkifiers', t.cast.admin, { ordered_linkifier_ids: [id] }),
        () => t.api.delete(`/realm/filters/${id}`, t.cast.admin),
      ];
      for (const write of writes) {
        await fill();
        expect(((await write()) as { status: number }).status).toBe(200);
        expect(cached()).toEqual({ caller: true, users: true, linkifiers: false });
      }
    });
  });

  describe('events, register state and audit rows', () => {
    const clients = async (fields: Record<string, unknown> = {}) => {
      const out: Client[] = [];
      for (const role of ['owner', 'admin', 'moderator', 'member', 'guest'] as const) {
        out.push(await register(t, t.cast[role], { event_types: ['realm_linkifiers'], ...fields }));
      }
      return out;
    };

    it('sends every active user the whole list after each change', async () => {
      const cs = await clients();
      const id = await addOk(ISSUE);
      const expected = [{ type: 'realm_linkifiers', realm_linkifiers: [{ id, ...ISSUE, ...UNSET }] }];
      for (const c of cs) expect((await pending(t, c)).map(({ id: _id, ...e }) => e)).toEqual(expected);
      await t.api.delete(`/realm/filters/${id}`, t.cast.admin);
      for (const c of cs)
        expect((await pending(t, c)).map(({ id: _id, ...e }) => e)).toEqual([{ type: 'realm_linkifiers', realm_linkifiers: [] }]);
      // A refused change sends nothing.
      await add(t.cast.member, ISSUE);
      for (const c of cs) expect(await pending(t, c)).toEqual([]);
    });

    it('puts the linkifiers in the register state for clients that understand URL templates', async () => {
      const id = await addOk(ISSUE);
      const modern = await register(t, t.cast.guest, {
        fetch_event_types: ['realm_linkifiers', 'realm_filters'],
        client_capabilities: { linkifier_url_template: true },
      });
      expect(modern.state.realm_linkifiers).toEqual([{ id, ...ISSUE, ...UNSET }]);
      expect(modern.state.realm_filters).toEqual([]);
      const legacy = await register(t, t.cast.guest, { fetch_event_types: ['realm_linkifiers'] });
      expect(legacy.state.realm_linkifiers).toEqual([]);
    });

    it('writes Zulip audit rows with the whole list', async () => {
      const id = await addOk(ISSUE);
      await t.api.patch(`/realm/filters/${id}`, t.cast.owner, { pattern: '#(?P<id>[0-9a-f]+)', url_template: ISSUE.url_template });
      const second = await addOk({ pattern: 'PR (?P<id>[0-9]+)', url_template: 'https://x.example/pr/{id}' });
      await t.api.patch('/realm/linkifiers', t.cast.admin, { ordered_linkifier_ids: [second, id] });
      await t.api.delete(`/realm/filters/${second}`, t.cast.admin);
      const changed = { id, pattern: '#(?P<id>[0-9a-f]+)', url_template: ISSUE.url_template, ...UNSET };
      const pr = { id: second, pattern: 'PR (?P<id>[0-9]+)', url_template: 'https://x.example/pr/{id}', ...UNSET };
      expect((await auditRows(AuditEventType.REALM_LINKIFIER_ADDED)).slice(-2)).toEqual([
        { actor: t.cast.admin.id, extra: { realm_linkifiers: [{ id, ...ISSUE, ...UNSET }], added_linkifier: { id, ...ISSUE, ...UNSET } } },
        { actor: t.cast.admin.id, extra: { realm_linkifiers: [changed, pr], added_linkifier: pr } },
      ]);
      expect((await auditRows(AuditEventType.REALM_LINKIFIER_CHANGED)).slice(-1)).toEqual([
        { actor: t.cast.owner.id, extra: { realm_linkifiers: [changed], changed_linkifier: changed } },
      ]);
      expect((await auditRows(AuditEventType.REALM_LINKIFIERS_REORDERED)).slice(-1)).toEqual([
        { actor: t.cast.admin.id, extra: { realm_linkifiers: [pr, changed] } },
      ]);
      expect((await auditRows(AuditEventType.REALM_LINKIFIER_REMOVED)).slice(-1)).toEqual([
        { actor: null, extra: { realm_linkifiers: [changed], removed_linkifier: { pattern: pr.pattern, url_template: pr.url_template } } },
      ]);
    });
  });
});
