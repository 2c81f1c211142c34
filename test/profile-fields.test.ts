import { AuditEventType } from '../src/domain/audit';
import { FieldType } from '../src/domain/profile-fields';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { startTestServer, type CastName, type TestServer } from './support/server';
import { pending, register } from './support/events';
import { captureEvents, freshUser, userOfAnotherRealm } from './users-fixtures';

const NOT_ADMIN = { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' };
const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });

eachDatabase('custom profile fields', (dialect) => {
  let t: TestServer;
  let serial = 0;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const as = (who: CastName | UserRow): UserRow => (typeof who === 'string' ? t.cast[who] : who);
  const create = (who: CastName | UserRow, body: Record<string, unknown>) => t.api.post('/realm/profile_fields', as(who), body);
  const update = (who: CastName | UserRow, id: number, body: Record<string, unknown>) =>
    t.api.patch(`/realm/profile_fields/${id}`, as(who), body);
  const remove = (who: CastName | UserRow, id: number) => t.api.delete(`/realm/profile_fields/${id}`, as(who));
  const reorder = (who: CastName | UserRow, order: number[]) => t.api.patch('/realm/profile_fields', as(who), { order });
  const list = async () => (await t.api.get('/realm/profile_fields', t.cast.member)).body.custom_fields as Array<Record<string, any>>;
  const uniqueName = (base = 'Field') => `${base} ${++serial}`;
  /** A new field made through the API; its id. */
  const field = async (fieldType: number, extra: Record<string, unknown> = {}) => {
    const res = await create('admin', { name: uniqueName(), field_type: fieldType, ...extra });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.id as number;
  };
  /** Everything these operations write, to assert that a refusal wrote nothing. */
  const snapshot = async () => {
    const db = t.ctx.db;
    const [fields, values, audit] = await Promise.all([
      db('custom_profile_fields').orderBy('id').select(),
      db('custom_profile_values').orderBy(['user_id', 'field_id']).select(),
      db('audit_log').count({ n: '*' }).first(),
    ]);
    return JSON.stringify({ fields, values, audit });
  };
  const expectRefused = async (request: () => Promise<{ status: number; body: unknown }>, body: unknown) => {
    const before = await snapshot();
    const { result: res, deliveries } = await captureEvents(t, request);
    expect([res.status, res.body]).toEqual([400, body]);
    expect(deliveries).toEqual([]);
    expect(await snapshot()).toBe(before);
  };
  const lastAudit = async (eventType: number) =>
    t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: eventType }).orderBy('id', 'desc').first();
  /** The summary fields of the organization are turned off, so each test starts below the limit. */
  const clearSummary = () => t.ctx.db('custom_profile_fields').where({ realm_id: t.realmId }).update({ display_in_profile_summary: false });
  const ownProfile = async (user: UserRow) => (await t.api.get('/users/me', user)).body.profile_data as Record<string, any>;

  describe('who may administer fields', () => {
    it.each([
      ['owner', 200],
      ['admin', 200],
      ['moderator', 400],
      ['member', 400],
      ['guest', 400],
    ] as Array<[CastName, number]>)('create, update, reorder and delete as %s', async (who, status) => {
      const id = await field(FieldType.SHORT_TEXT);
      const created = await create(who, { name: uniqueName(), field_type: FieldType.SHORT_TEXT });
      expect(created.status).toBe(status);
      const updated = await update(who, id, { hint: 'changed' });
      const order = (await list()).map((f) => f.id as number);
      const reordered = await reorder(who, order.reverse());
      const deleted = await remove(who, id);
      for (const res of [updated, reordered, deleted]) expect(res.status).toBe(status);
      if (status === 400) {
        for (const res of [created, updated, reordered, deleted]) expect(res.body).toEqual(NOT_ADMIN);
        expect((await list()).some((f) => f.id === id)).toBe(true);
      } else {
        expect((await list()).some((f) => f.id === id)).toBe(false);
      }
    });

    it.each(['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as CastName[])('lists them for a %s', async (who) => {
      const id = await field(FieldType.DATE);
      const res = await t.api.get('/realm/profile_fields', t.cast[who]);
      expect(res.status).toBe(200);
      expect((res.body.custom_fields as Array<{ id: number }>).map((f) => f.id)).toContain(id);
    });
  });

  describe('creating', () => {
    it('adds a field at the end, announces the list to every active user and logs it', async () => {
      const name = uniqueName('Team');
      const { result: res, deliveries } = await captureEvents(t, () =>
        create('admin', {
          name: `  ${name} `,
          hint: 'Which team',
          field_type: FieldType.SHORT_TEXT,
          required: true,
          editable_by_user: false,
        }),
      );
      expect(res.status).toBe(200);
      const id = res.body.id as number;
      const fields = await list();
      expect(fields.at(-1)).toEqual({
        id,
        name,
        type: FieldType.SHORT_TEXT,
        hint: 'Which team',
        field_data: '',
        order: id,
        required: true,
        editable_by_user: false,
      });
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]!.event).toEqual({ type: 'custom_profile_fields', fields });
      expect(deliveries[0]!.userIds).toEqual(expect.arrayContaining([t.cast.member.id, t.cast.guest.id, t.cast.bot.id]));
      expect(deliveries[0]!.userIds).not.toContain(t.cast.deactivated.id);
      const audit = await lastAudit(AuditEventType.CUSTOM_PROFILE_FIELD_CREATED);
      expect(audit).toMatchObject({ acting_user_id: t.cast.admin.id });
      expect(JSON.parse(audit!.extra_data!)).toEqual({ field_id: id, name, field_type: FieldType.SHORT_TEXT });
    });

    it('stores the choices of a list of options and the kind of an external account, and nothing for other types', async () => {
      const choices = { a: { text: 'Alpha', order: '1' }, b: { text: 'Beta', order: '2' } };
      const select = await field(FieldType.SELECT, { field_data: choices });
      const custom = { subtype: 'custom', url_pattern: 'https://example.org/~%(username)s' };
      const account = await field(FieldType.EXTERNAL_ACCOUNT, { field_data: custom });
      const date = await field(FieldType.DATE, { field_data: { ignored: 'yes' } });
      const byId = new Map((await list()).map((f) => [f.id, f]));
      expect(JSON.parse(byId.get(select)!.field_data)).toEqual(choices);
      expect(JSON.parse(byId.get(account)!.field_data)).toEqual(custom);
      expect(byId.get(date)!.field_data).toBe('');
    });

    it("names a default external account field after its kind, whatever the request's label", async () => {
      const res = await create('admin', {
        name: 'ignored',
        hint: 'ignored too',
        field_type: FieldType.EXTERNAL_ACCOUNT,
        field_data: { subtype: 'gitlab' },
      });
      expect(res.status).toBe(200);
      const f = (await list()).find((x) => x.id === res.body.id);
      expect(f).toMatchObject({ name: 'GitLab account', hint: '', field_data: JSON.stringify({ subtype: 'gitlab' }) });
      // A second one of the kind has the same label.
      await expectRefused(
        () => create('admin', { field_type: FieldType.EXTERNAL_ACCOUNT, field_data: { subtype: 'gitlab' } }),
        refusal('A field with that label already exists.'),
      );
    });

    it.each([
      ['a blank label', () => ({ name: '   ', field_type: 1 }), 'Label cannot be blank.'],
      ['no label', () => ({ field_type: 1 }), 'Label cannot be blank.'],
      ['a label over 40 characters', () => ({ name: 'n'.repeat(41), field_type: 1 }), 'name is too long (limit: 40 characters)'],
      [
        'a hint over 80 characters',
        () => ({ name: uniqueName(), hint: 'h'.repeat(81), field_type: 1 }),
        'hint is too long (limit: 80 characters)',
      ],
      ['an unknown type', () => ({ name: uniqueName(), field_type: 9 }), 'Invalid field type.'],
      ['a list without choices', () => ({ name: uniqueName(), field_type: 3 }), 'Field must have at least one choice.'],
      [
        'two choices of one text',
        () => ({ name: uniqueName(), field_type: 3, field_data: { a: { text: 'X', order: '1' }, b: { text: 'X', order: '2' } } }),
        'Field must not have duplicate choices.',
      ],
      [
        'a choice without text',
        () => ({ name: uniqueName(), field_type: 3, field_data: { a: { order: '1' } } }),
        'text key is missing from field_data',
      ],
      [
        'a blank choice text',
        () => ({ name: uniqueName(), field_type: 3, field_data: { a: { text: ' ', order: '1' } } }),
        'field_data["text"] cannot be blank.',
      ],
      [
        'a blank choice key',
        () => ({ name: uniqueName(), field_type: 3, field_data: { ' ': { text: 'A', order: '1' } } }),
        "'value' cannot be blank.",
      ],
      [
        'a choice with extra keys',
        () => ({ name: uniqueName(), field_type: 3, field_data: { a: { text: 'A', order: '1', colour: 'red' } } }),
        'Unexpected arguments: colour',
      ],
      ['a choice that is a string', () => ({ name: uniqueName(), field_type: 3, field_data: { a: 'A' } }), 'field_data is not a dict'],
      [
        'a number in field_data',
        () => ({ name: uniqueName(), field_type: 3, field_data: { a: 1 } }),
        'field_data["a"] is not an allowed_type',
      ],
      ['an external account without a kind', () => ({ name: uniqueName(), field_type: 7 }), 'subtype key is missing from field_data'],
      [
        'an unknown external account kind',
        () => ({ name: uniqueName(), field_type: 7, field_data: { subtype: 'myspace' } }),
        'Invalid external account type',
      ],
      [
        'a custom account without a pattern',
        () => ({ name: uniqueName(), field_type: 7, field_data: { subtype: 'custom' } }),
        'Custom external account must define URL pattern',
      ],
      [
        'a pattern without the user name',
        () => ({ name: uniqueName(), field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://example.org/' } }),
        "URL pattern must contain '%(username)s'.",
      ],
      [
        'a pattern that is no URL',
        () => ({ name: uniqueName(), field_type: 7, field_data: { subtype: 'custom', url_pattern: 'example %(username)s' } }),
        'field_data["url_pattern"] is not a URL',
      ],
      [
        'a Users field in the summary',
        () => ({ name: uniqueName(), field_type: 6, display_in_profile_summary: true }),
        'Field type not supported for display in profile summary.',
      ],
    ] as Array<[string, () => Record<string, unknown>, string]>)('refuses %s', async (_what, body, msg) => {
      await clearSummary();
      await expectRefused(() => create('admin', body()), refusal(msg));
    });

    it('refuses a label in use, compared exactly', async () => {
      const name = uniqueName('Office');
      await field(FieldType.SHORT_TEXT, { name });
      await expectRefused(() => create('owner', { name, field_type: FieldType.URL }), refusal('A field with that label already exists.'));
      expect((await create('owner', { name: name.toUpperCase(), field_type: FieldType.URL })).status).toBe(200);
    });

    it('shows at most 2 fields in the profile summary, long text among them', async () => {
      await clearSummary();
      await field(FieldType.LONG_TEXT, { display_in_profile_summary: true });
      const second = await field(FieldType.PRONOUNS, { display_in_profile_summary: true });
      expect((await list()).find((f) => f.id === second)!.display_in_profile_summary).toBe(true);
      await expectRefused(
        () => create('admin', { name: uniqueName(), field_type: 1, display_in_profile_summary: true }),
        refusal('Only 2 custom profile fields can be displayed in the profile summary.'),
      );
      const third = await field(FieldType.SHORT_TEXT);
      await expectRefused(
        () => update('admin', third, { display_in_profile_summary: true }),
        refusal('Only 2 custom profile fields can be displayed in the profile summary.'),
      );
      // A field already in the summary does not count against itself.
      expect((await update('admin', second, { display_in_profile_summary: true, hint: 'kept' })).status).toBe(200);
    });

    it('matches users by a short text or external account field only (use_for_user_matching, level 455), sent only when true', async () => {
      const text = await field(FieldType.SHORT_TEXT, { use_for_user_matching: true });
      const account = await field(FieldType.EXTERNAL_ACCOUNT, { field_data: { subtype: 'github' }, use_for_user_matching: true });
      const plain = await field(FieldType.SHORT_TEXT);
      for (const fieldType of [FieldType.LONG_TEXT, FieldType.URL, FieldType.PRONOUNS, FieldType.DATE]) {
        await expectRefused(
          () => create('admin', { name: uniqueName(), field_type: fieldType, use_for_user_matching: true }),
          refusal('Field type not supported for user matching.'),
        );
      }
      const link = await field(FieldType.URL);
      await expectRefused(
        () => update('admin', link, { use_for_user_matching: true }),
        refusal('Field type not supported for user matching.'),
      );
      const byId = new Map((await list()).map((f) => [f.id as number, f]));
      expect(byId.get(text)!.use_for_user_matching).toBe(true);
      expect(byId.get(account)!.use_for_user_matching).toBe(true);
      expect(byId.get(plain)!).not.toHaveProperty('use_for_user_matching');
      // Switched on and off by an update, announced in the field list as every change is.
      const { result: on, deliveries } = await captureEvents(t, () => update('admin', plain, { use_for_user_matching: true }));
      expect(on.status).toBe(200);
      const announced = deliveries.find((d) => d.event.type === 'custom_profile_fields')!.event;
      expect(announced).toMatchObject({
        fields: expect.arrayContaining([expect.objectContaining({ id: plain, use_for_user_matching: true })]),
      });
      expect((await update('admin', text, { use_for_user_matching: false })).status).toBe(200);
      const after = new Map((await list()).map((f) => [f.id as number, f]));
      expect(after.get(plain)!.use_for_user_matching).toBe(true);
      expect(after.get(text)!).not.toHaveProperty('use_for_user_matching');
    });
  });

  describe('updating', () => {
    it('changes only what is sent, announces the list and logs the change', async () => {
      const id = await field(FieldType.SHORT_TEXT, { hint: 'before' });
      const name = uniqueName('Renamed');
      const { result: res, deliveries } = await captureEvents(t, () =>
        update('admin', id, { name: ` ${name} `, editable_by_user: false, required: true }),
      );
      expect(res.status).toBe(200);
      const fields = await list();
      expect(fields.find((f) => f.id === id)).toMatchObject({ name, hint: 'before', editable_by_user: false, required: true });
      expect(deliveries.map((d) => d.event)).toEqual([{ type: 'custom_profile_fields', fields }]);
      const audit = await lastAudit(AuditEventType.CUSTOM_PROFILE_FIELD_UPDATED);
      expect(JSON.parse(audit!.extra_data!)).toEqual({
        field_id: id,
        changes: {
          name: { old_value: expect.any(String), new_value: name },
          editable_by_user: { old_value: true, new_value: false },
          required: { old_value: false, new_value: true },
        },
      });
    });

    it('keeps a default external account field as its kind made it, but lets its flags change', async () => {
      await clearSummary();
      await t.ctx.db('custom_profile_fields').where({ realm_id: t.realmId, name: 'Codeberg account' }).delete();
      const res = await create('admin', { field_type: FieldType.EXTERNAL_ACCOUNT, field_data: { subtype: 'codeberg' } });
      const id = res.body.id as number;
      for (const body of [{ name: 'Mine' }, { hint: 'x' }, { field_data: { subtype: 'github' } }]) {
        await expectRefused(() => update('admin', id, body), refusal('Default custom field cannot be updated.'));
      }
      expect((await update('admin', id, { name: 'Codeberg account', display_in_profile_summary: true, required: true })).status).toBe(200);
      expect((await list()).find((f) => f.id === id)).toMatchObject({
        name: 'Codeberg account',
        display_in_profile_summary: true,
        required: true,
      });
    });

    it("removes users' values of the choices a list drops", async () => {
      const id = await field(FieldType.SELECT, { field_data: { a: { text: 'A', order: '1' }, b: { text: 'B', order: '2' } } });
      const [u1, u2] = [await freshUser(t), await freshUser(t)];
      expect((await t.api.patch('/users/me/profile_data', u1, { data: [{ id, value: 'a' }] })).status).toBe(200);
      expect((await t.api.patch('/users/me/profile_data', u2, { data: [{ id, value: 'b' }] })).status).toBe(200);
      // Read once, so the users' cached extras hold the values.
      expect((await ownProfile(u1))[id]).toEqual({ value: 'a' });
      expect((await update('admin', id, { field_data: { b: { text: 'B', order: '1' }, c: { text: 'C', order: '2' } } })).status).toBe(200);
      expect((await ownProfile(u1))[id]).toBeUndefined();
      expect((await ownProfile(u2))[id]).toEqual({ value: 'b' });
    });

    it('ignores field_data for a type without any', async () => {
      const id = await field(FieldType.URL);
      expect((await update('admin', id, { field_data: { a: 'b' } })).status).toBe(200);
      expect((await list()).find((f) => f.id === id)!.field_data).toBe('');
    });

    it('refuses a missing field, a field of another organization, a label in use and a bad definition', async () => {
      const stranger = await userOfAnotherRealm(t, `pf${dialect}`);
      const [foreign] = await t.ctx
        .db('custom_profile_fields')
        .insert({ realm_id: stranger.realm_id, name: 'Theirs', field_type: 1, field_data: '' });
      const id = await field(FieldType.SELECT, { field_data: { a: { text: 'A', order: '1' } } });
      const other = await field(FieldType.SHORT_TEXT);
      const otherName = (await list()).find((f) => f.id === other)!.name as string;
      await expectRefused(() => update('admin', 999999, { hint: 'x' }), refusal('Field id 999999 not found.'));
      await expectRefused(() => update('admin', Number(foreign), { hint: 'x' }), refusal(`Field id ${Number(foreign)} not found.`));
      await expectRefused(() => update('admin', id, { name: otherName }), refusal('A field with that label already exists.'));
      await expectRefused(() => update('admin', id, { name: ' ' }), refusal('Label cannot be blank.'));
      await expectRefused(() => update('admin', id, { field_data: {} }), refusal('Field must have at least one choice.'));
      await expectRefused(() => update('admin', id, { hint: 'h'.repeat(81) }), refusal('hint is too long (limit: 80 characters)'));
    });
  });

  describe('deleting', () => {
    it("removes the field and every user's value, announces the list and logs it", async () => {
      const id = await field(FieldType.SHORT_TEXT);
      const u = await freshUser(t);
      await t.api.patch('/users/me/profile_data', u, { data: [{ id, value: 'here' }] });
      expect((await ownProfile(u))[id]).toBeDefined();
      const { result: res, deliveries } = await captureEvents(t, () => remove('owner', id));
      expect(res.status).toBe(200);
      expect((await list()).some((f) => f.id === id)).toBe(false);
      expect(await t.ctx.db('custom_profile_values').where({ field_id: id })).toEqual([]);
      expect((await ownProfile(u))[id]).toBeUndefined();
      expect(deliveries.map((d) => d.event.type)).toEqual(['custom_profile_fields']);
      const audit = await lastAudit(AuditEventType.CUSTOM_PROFILE_FIELD_DELETED);
      expect(JSON.parse(audit!.extra_data!)).toMatchObject({ field_id: id });
    });

    it('refuses a missing field', async () => {
      await expectRefused(() => remove('admin', 999999), refusal('Field id 999999 not found.'));
    });
  });

  describe('reordering', () => {
    it('gives each field its position, ignoring IDs of no field', async () => {
      await field(FieldType.SHORT_TEXT);
      const ids = (await list()).map((f) => f.id as number);
      const wanted = [...ids].reverse();
      const { result: res, deliveries } = await captureEvents(t, () => reorder('admin', [...wanted, 999999]));
      expect(res.status).toBe(200);
      const fields = await list();
      expect(fields.map((f) => f.id)).toEqual(wanted);
      expect(fields.map((f) => f.order)).toEqual(wanted.map((_, i) => i));
      expect(deliveries.map((d) => d.event)).toEqual([{ type: 'custom_profile_fields', fields }]);
      expect(await lastAudit(AuditEventType.CUSTOM_PROFILE_FIELDS_REORDERED)).toBeDefined();
    });

    it('refuses an order that leaves a field out', async () => {
      const ids = (await list()).map((f) => f.id as number);
      await expectRefused(() => reorder('admin', ids.slice(1)), refusal('Invalid order mapping.'));
    });
  });

  describe("users' own values", () => {
    it('sets values, announces the changed ones to those who may know the user, and logs them', async () => {
      const text = await field(FieldType.LONG_TEXT);
      const users = await field(FieldType.USER);
      const u = await freshUser(t);
      const { result: res, deliveries } = await captureEvents(t, () =>
        t.api.patch('/users/me/profile_data', u, {
          data: [
            { id: text, value: 'I like **tea**' },
            { id: users, value: [t.cast.member.id] },
          ],
        }),
      );
      expect(res.status).toBe(200);
      expect(deliveries.map((d) => d.event)).toEqual([
        {
          type: 'realm_user',
          op: 'update',
          person: {
            user_id: u.id,
            custom_profile_field: { id: text, value: 'I like **tea**', rendered_value: '<p>I like <strong>tea</strong></p>' },
          },
        },
        {
          type: 'realm_user',
          op: 'update',
          person: { user_id: u.id, custom_profile_field: { id: users, value: `[${t.cast.member.id}]` } },
        },
      ]);
      expect(deliveries[0]!.userIds).toEqual(expect.arrayContaining([u.id, t.cast.guest.id, t.cast.member.id]));
      expect(await ownProfile(u)).toMatchObject({
        [text]: { value: 'I like **tea**', rendered_value: '<p>I like <strong>tea</strong></p>' },
        [users]: { value: `[${t.cast.member.id}]` },
      });
      const audit = await lastAudit(AuditEventType.USER_CUSTOM_PROFILE_DATA_CHANGED);
      expect(audit).toMatchObject({ acting_user_id: u.id, modified_user_id: u.id });
      // The same values again change nothing and announce nothing.
      const again = await captureEvents(t, () =>
        t.api.patch('/users/me/profile_data', u, { data: [{ id: text, value: 'I like **tea**' }] }),
      );
      expect(again.deliveries).toEqual([]);
    });

    it('removes values, a field without one being no change', async () => {
      const id = await field(FieldType.PRONOUNS);
      const u = await freshUser(t);
      await t.api.patch('/users/me/profile_data', u, { data: [{ id, value: 'they/them' }] });
      const { result: res, deliveries } = await captureEvents(t, () => t.api.delete('/users/me/profile_data', u, { data: [id] }));
      expect(res.status).toBe(200);
      expect(deliveries.map((d) => d.event.person)).toEqual([{ user_id: u.id, custom_profile_field: { id, value: null } }]);
      expect((await ownProfile(u))[id]).toBeUndefined();
      const twice = await captureEvents(t, () => t.api.delete('/users/me/profile_data', u, { data: [id] }));
      expect(twice.result.status).toBe(200);
      expect(twice.deliveries).toEqual([]);
    });

    it.each([
      ['member', 400],
      ['guest', 400],
      ['moderator', 400],
      ['admin', 200],
      ['owner', 200],
    ] as Array<[CastName, number]>)('keeps a field users may not edit to administrators (%s)', async (who, status) => {
      const id = await field(FieldType.SHORT_TEXT, { editable_by_user: false });
      const msg = 'You are not allowed to change this field. Contact an administrator to update it.';
      const set = () => t.api.patch('/users/me/profile_data', t.cast[who], { data: [{ id, value: 'mine' }] });
      const clear = () => t.api.delete('/users/me/profile_data', t.cast[who], { data: [id] });
      if (status === 400) {
        await expectRefused(set, refusal(msg));
        await expectRefused(clear, refusal(msg));
      } else {
        expect((await set()).status).toBe(200);
        expect((await clear()).status).toBe(200);
      }
    });

    it('lets an administrator set a field users may not edit for someone else', async () => {
      const id = await field(FieldType.SHORT_TEXT, { editable_by_user: false });
      const u = await freshUser(t);
      expect((await t.api.patch(`/users/${u.id}`, t.cast.admin, { profile_data: [{ id, value: 'set by admin' }] })).status).toBe(200);
      expect((await ownProfile(u))[id]).toEqual({ value: 'set by admin', rendered_value: '<p>set by admin</p>' });
    });

    it('refuses bots, unknown fields and bad values, writing nothing', async () => {
      const date = await field(FieldType.DATE);
      const users = await field(FieldType.USER);
      const u = await freshUser(t);
      const bot = 'This endpoint does not accept bot requests.';
      await expectRefused(
        () => t.api.patch('/users/me/profile_data', t.cast.bot, { data: [{ id: date, value: '2020-01-01' }] }),
        refusal(bot),
      );
      await expectRefused(() => t.api.delete('/users/me/profile_data', t.cast.bot, { data: [date] }), refusal(bot));
      await expectRefused(() => t.api.delete('/users/me/profile_data', u, { data: [999999] }), refusal('Field id 999999 not found.'));
      // The first value is good: nothing is stored when a later one is refused.
      const name = (await list()).find((f) => f.id === date)!.name as string;
      await expectRefused(
        () =>
          t.api.patch('/users/me/profile_data', u, {
            data: [
              { id: users, value: [t.cast.member.id] },
              { id: date, value: '2020-02-30' },
            ],
          }),
        refusal(`${name} is not a date`),
      );
      await expectRefused(
        () => t.api.patch('/users/me/profile_data', u, { data: [{ id: users, value: [999998, t.cast.member.id, 999999] }] }),
        refusal('Invalid user IDs: 999998, 999999'),
      );
      await expectRefused(
        () => t.api.patch('/users/me/profile_data', u, { data: [{ id: users, value: [t.cast.bot.id] }] }),
        refusal(`User with ID ${t.cast.bot.id} is a bot`),
      );
    });
  });

  describe("through each role's event queue", () => {
    it('delivers the field list and value changes to every role, not to a deactivated user', async () => {
      const roles: CastName[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot'];
      const clients = await Promise.all(roles.map((r) => register(t, t.cast[r], { event_types: ['custom_profile_fields', 'realm_user'] })));
      const id = await field(FieldType.SHORT_TEXT);
      await t.api.patch('/users/me/profile_data', t.cast.member, { data: [{ id, value: 'seen by all' }] });
      for (const c of clients) {
        const events = await pending(t, c);
        expect(events.map((e) => e.type)).toEqual(['custom_profile_fields', 'realm_user']);
        expect(events[0]!.fields.some((f: { id: number }) => f.id === id)).toBe(true);
        expect(events[1]!.person).toEqual({
          user_id: t.cast.member.id,
          custom_profile_field: { id, value: 'seen by all', rendered_value: '<p>seen by all</p>' },
        });
      }
    });
  });

  describe('in POST /register and user lists', () => {
    it('sends the fields and the users’ values', async () => {
      const id = await field(FieldType.SHORT_TEXT);
      const u = await freshUser(t);
      await t.api.patch('/users/me/profile_data', u, { data: [{ id, value: 'listed' }] });
      const reg = await t.api.post('/register', t.cast.member, { fetch_event_types: ['custom_profile_fields', 'realm_user'] });
      expect(reg.status).toBe(200);
      expect(reg.body.custom_profile_fields).toEqual(await list());
      const listed = (reg.body.realm_users as Array<Record<string, any>>).find((x) => x.user_id === u.id);
      expect(listed!.profile_data[id]).toEqual({ value: 'listed', rendered_value: '<p>listed</p>' });
      const users = await t.api.get('/users', t.cast.member, { include_custom_profile_fields: true });
      const one = (users.body.members as Array<Record<string, any>>).find((x) => x.user_id === u.id);
      expect(one!.profile_data[id]).toEqual({ value: 'listed', rendered_value: '<p>listed</p>' });
    });
  });
});
