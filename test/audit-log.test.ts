import { doRegenerateApiKey } from '../src/actions/users';
import { auditLogCommand } from '../src/cli/audit-log';
import { AuditEventType as T } from '../src/domain/audit';
import { FieldType } from '../src/domain/profile-fields';
import { Role } from '../src/domain/roles';
import { eachDatabase } from './support/databases';
import { createChannelInTx } from '../src/actions/channels';
import { inTransaction } from '../src/db/transaction';
import { ApiResponse, createChannel, createMembers, startTestServer, TestServer } from './support/server';
import { createProfileField, freshUser, systemGroupId } from './users-fixtures';

/** An audit row as the tests compare it (extra_data decoded; `audited` checks the time). */
interface Row {
  realm_id: number;
  event_type: number;
  acting_user_id: number | null;
  modified_user_id: number | null;
  modified_channel_id: number | null;
  modified_group_id: number | null;
  extra: unknown;
}

/** The rows of one request in a fixed order: which of a request's rows is written first does not matter. */
const sorted = (rows: Row[]) =>
  [...rows].sort(
    (a, b) =>
      a.event_type - b.event_type ||
      (a.modified_user_id ?? 0) - (b.modified_user_id ?? 0) ||
      (a.modified_channel_id ?? 0) - (b.modified_channel_id ?? 0) ||
      (a.modified_group_id ?? 0) - (b.modified_group_id ?? 0) ||
      JSON.stringify(a.extra).localeCompare(JSON.stringify(b.extra)),
  );

eachDatabase('audit log', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  const seconds = () => Math.floor(Date.now() / 1000);
  const lastId = async () => Number((await t.ctx.db('audit_log').max({ id: 'id' }).first())?.id ?? 0);

  /** Runs `work`; returns the audit rows it wrote (sorted), each checked to be stamped within the run. */
  async function audited<R>(work: () => Promise<R>): Promise<{ result: R; rows: Row[] }> {
    const mark = await lastId();
    const start = seconds();
    const result = await work();
    const end = seconds();
    const raw: Array<Record<string, any>> = await t.ctx.db('audit_log').where('id', '>', mark).orderBy('id');
    for (const r of raw) {
      expect(Number(r.event_time)).toBeGreaterThanOrEqual(start);
      expect(Number(r.event_time)).toBeLessThanOrEqual(end);
    }
    const rows = raw.map((r) => ({
      realm_id: r.realm_id,
      event_type: r.event_type,
      acting_user_id: r.acting_user_id,
      modified_user_id: r.modified_user_id,
      modified_channel_id: r.modified_channel_id,
      modified_group_id: r.modified_group_id,
      extra: r.extra_data === null ? null : JSON.parse(r.extra_data),
    }));
    return { result, rows: sorted(rows) };
  }

  /** An expected row: in the test realm, with no actor, target or extra unless given. */
  const row = (r: Partial<Row> & Pick<Row, 'event_type'>): Row => ({
    realm_id: t.realmId,
    acting_user_id: null,
    modified_user_id: null,
    modified_channel_id: null,
    modified_group_id: null,
    extra: null,
    ...r,
  });

  const expectOk = (res: ApiResponse) => expect([res.status, res.body.msg]).toEqual([200, '']);

  /** A refused request writes no audit row (and what it changed before the refusal rolls back with it). */
  async function expectNoRows(request: () => Promise<ApiResponse>, msg: string): Promise<void> {
    const { result: res, rows } = await audited(request);
    const code = /^Must be an organization (administrator|owner)$/.test(msg) ? 'UNAUTHORIZED_PRINCIPAL' : 'BAD_REQUEST';
    expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code }]);
    expect(rows).toEqual([]);
  }

  const group = (name: string) => systemGroupId(t, name);

  describe('users', () => {
    it('records a user an administrator creates, with the role and the system groups it joins', async () => {
      const admin = t.cast.admin;
      const { result: res, rows } = await audited(() =>
        t.api.post('/users', admin, { email: 'created@example.com', password: 'a-good-password', full_name: 'Cre Ated' }),
      );
      expectOk(res);
      const by = { acting_user_id: admin.id, modified_user_id: res.body.user_id };
      expect(rows).toEqual(
        sorted([
          row({ ...by, event_type: T.USER_CREATED, extra: { role: Role.MEMBER } }),
          row({ ...by, event_type: T.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, modified_group_id: await group('role:members') }),
          row({ ...by, event_type: T.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, modified_group_id: await group('role:fullmembers') }),
        ]),
      );
    });

    it('records a role change (old and new role) and the system groups it moves the user between', async () => {
      const u = await freshUser(t);
      const { result: res, rows } = await audited(() => t.api.patch(`/users/${u.id}`, t.cast.admin, { role: Role.MODERATOR }));
      expectOk(res);
      const by = { acting_user_id: t.cast.admin.id, modified_user_id: u.id };
      expect(rows).toEqual(
        sorted([
          row({ ...by, event_type: T.USER_ROLE_CHANGED, extra: { old_value: Role.MEMBER, new_value: Role.MODERATOR } }),
          row({ ...by, event_type: T.USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED, modified_group_id: await group('role:members') }),
          row({ ...by, event_type: T.USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED, modified_group_id: await group('role:fullmembers') }),
          row({ ...by, event_type: T.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, modified_group_id: await group('role:moderators') }),
        ]),
      );
    });

    it('records a full name change', async () => {
      const u = await freshUser(t, { name: 'Old Name' });
      const { result: res, rows } = await audited(() => t.api.patch(`/users/${u.id}`, t.cast.admin, { full_name: 'New Name' }));
      expectOk(res);
      expect(rows).toEqual([
        row({
          event_type: T.USER_FULL_NAME_CHANGED,
          acting_user_id: t.cast.admin.id,
          modified_user_id: u.id,
          extra: { old_value: 'Old Name', new_value: 'New Name' },
        }),
      ]);
    });

    it('records an email change by an owner allowed to make it', async () => {
      await t.ctx.db('users').where({ id: t.cast.owner.id }).update({ can_change_user_emails: true });
      try {
        const u = await freshUser(t);
        const { result: res, rows } = await audited(() => t.api.patch(`/users/${u.id}`, t.cast.owner, { new_email: 'moved@example.com' }));
        expectOk(res);
        expect(rows).toEqual([
          row({
            event_type: T.USER_EMAIL_CHANGED,
            acting_user_id: t.cast.owner.id,
            modified_user_id: u.id,
            extra: { old_value: u.delivery_email, new_value: 'moved@example.com' },
          }),
        ]);
      } finally {
        await t.ctx.db('users').where({ id: t.cast.owner.id }).update({ can_change_user_emails: false });
      }
    });

    it('records custom profile data set, changed and cleared, one row per field', async () => {
      const phone = await createProfileField(t, 'Phone', FieldType.SHORT_TEXT);
      const team = await createProfileField(t, 'Team', FieldType.SHORT_TEXT);
      const u = await freshUser(t);
      const by = { acting_user_id: t.cast.admin.id, modified_user_id: u.id, event_type: T.USER_CUSTOM_PROFILE_DATA_CHANGED };
      const set = await audited(() =>
        t.api.patch(`/users/${u.id}`, t.cast.admin, {
          profile_data: [
            { id: phone, value: '555-0100' },
            { id: team, value: 'Blue' },
          ],
        }),
      );
      expectOk(set.result);
      expect(set.rows).toEqual(
        sorted([
          row({ ...by, extra: { field_id: phone, old_value: null, new_value: '555-0100' } }),
          row({ ...by, extra: { field_id: team, old_value: null, new_value: 'Blue' } }),
        ]),
      );
      // An unchanged value writes nothing; a changed and a cleared one a row each.
      const change = await audited(() =>
        t.api.patch(`/users/${u.id}`, t.cast.admin, {
          profile_data: [
            { id: phone, value: '555-0100' },
            { id: team, value: 'Red' },
          ],
        }),
      );
      expect(change.rows).toEqual([row({ ...by, extra: { field_id: team, old_value: 'Blue', new_value: 'Red' } })]);
      const clear = await audited(() => t.api.patch(`/users/${u.id}`, t.cast.admin, { profile_data: [{ id: phone, value: null }] }));
      expect(clear.rows).toEqual([row({ ...by, extra: { field_id: phone, old_value: '555-0100', new_value: null } })]);
    });

    it('records a deactivation, and one for each bot it deactivates with the user', async () => {
      const u = await freshUser(t);
      const bot = await freshUser(t, { isBot: true, botOwnerId: u.id });
      const { result: res, rows } = await audited(() => t.api.delete(`/users/${u.id}`, t.cast.admin));
      expectOk(res);
      expect(rows).toEqual(
        sorted([
          row({ event_type: T.USER_DEACTIVATED, acting_user_id: t.cast.admin.id, modified_user_id: u.id }),
          row({ event_type: T.USER_DEACTIVATED, acting_user_id: t.cast.admin.id, modified_user_id: bot.id }),
        ]),
      );
    });

    it('records a reactivation', async () => {
      const u = await freshUser(t, { deactivated: true });
      const { result: res, rows } = await audited(() => t.api.post(`/users/${u.id}/reactivate`, t.cast.admin));
      expectOk(res);
      expect(rows).toEqual([row({ event_type: T.USER_REACTIVATED, acting_user_id: t.cast.admin.id, modified_user_id: u.id })]);
    });

    it('records an API key replaced from the command line, without the key', async () => {
      const u = await freshUser(t);
      const { result: key, rows } = await audited(() => doRegenerateApiKey(t.ctx.db, u));
      expect(rows).toEqual([row({ event_type: T.USER_API_KEY_CHANGED, modified_user_id: u.id })]);
      expect(JSON.stringify(rows)).not.toContain(key);
    });

    it('writes nothing for a refused change', async () => {
      const u = await freshUser(t);
      await expectNoRows(
        () => t.api.patch(`/users/${u.id}`, t.cast.member, { role: Role.ADMINISTRATOR }),
        'Must be an organization administrator',
      );
      await expectNoRows(() => t.api.patch(`/users/${u.id}`, t.cast.admin, { full_name: 'x' }), 'Name too short!');
      await expectNoRows(() => t.api.delete(`/users/${u.id}`, t.cast.member), 'Insufficient permission');
      await expectNoRows(() => t.api.post(`/users/${u.id}/reactivate`, t.cast.admin), 'User is already active');
      await expectNoRows(
        () => t.api.post('/users', t.cast.moderator, { email: 'nope@example.com', password: 'a-good-password', full_name: 'No Pe' }),
        'Must be an organization administrator',
      );
    });

    it('writes nothing when a later part of the request fails after an earlier part was made (one transaction)', async () => {
      const u = await freshUser(t);
      // The role change is written (and audited) before the name is checked; the refusal rolls both back.
      await expectNoRows(() => t.api.patch(`/users/${u.id}`, t.cast.admin, { role: Role.MODERATOR, full_name: 'x' }), 'Name too short!');
      expect((await t.ctx.db('users').where({ id: u.id }).first('role'))!.role).toBe(Role.MEMBER);
    });
  });

  describe('organization', () => {
    it('records the organization it was created with', async () => {
      const rows = await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: T.REALM_CREATED });
      expect(rows).toHaveLength(1);
      expect(rows[0].acting_user_id).toBeNull();
      expect(JSON.parse(rows[0].extra_data!)).toEqual({ string_id: '', name: 'Test Organization' });
    });

    it("records each changed default of new users' settings, with old and new value", async () => {
      const { result: res, rows } = await audited(() =>
        t.api.patch('/realm/user_settings_defaults', t.cast.admin, { enter_sends: true, emojiset: 'text', twenty_four_hour_time: false }),
      );
      expectOk(res);
      const by = { acting_user_id: t.cast.admin.id, event_type: T.REALM_DEFAULT_USER_SETTINGS_CHANGED };
      // twenty_four_hour_time was already false: not a change.
      expect(rows).toEqual(
        sorted([
          row({ ...by, extra: { property: 'enter_sends', old_value: false, new_value: true } }),
          row({ ...by, extra: { property: 'emojiset', old_value: 'google', new_value: 'text' } }),
        ]),
      );
      await expectNoRows(
        () => t.api.patch('/realm/user_settings_defaults', t.cast.member, { enter_sends: false }),
        'Must be an organization administrator',
      );
      await expectNoRows(
        () => t.api.patch('/realm/user_settings_defaults', t.cast.admin, { enter_sends: false, default_language: 'xx' }),
        'Invalid default_language',
      );
    });
  });

  describe('channels and subscriptions', () => {
    it('records a created channel with its settings and permission groups, and the other people subscribed to it', async () => {
      const creator = t.cast.moderator;
      const { result: res, rows } = await audited(() =>
        // No notification: the first one would create the notification bot (and its own audit rows).
        t.api.post('/channels/create', creator, {
          name: 'audited',
          subscribers: [creator.id, t.cast.member.id],
          invite_only: true,
          send_new_subscription_messages: false,
        }),
      );
      expectOk(res);
      const channel = await t.ctx.db('channels').where({ id: res.body.id }).first();
      const permissionGroups = Object.fromEntries(Object.entries(channel!).filter(([k]) => /^can_.*_group$/.test(k)));
      expect(Object.keys(permissionGroups).length).toBeGreaterThan(5);
      expect(rows).toEqual(
        sorted([
          row({
            event_type: T.CHANNEL_CREATED,
            acting_user_id: creator.id,
            modified_channel_id: channel!.id,
            extra: {
              name: 'audited',
              invite_only: true,
              is_web_public: false,
              history_public_to_subscribers: false,
              permission_groups: permissionGroups,
            },
          }),
          // Subscribing oneself is not an administrative change.
          row({
            event_type: T.SUBSCRIPTION_CREATED,
            acting_user_id: creator.id,
            modified_user_id: t.cast.member.id,
            modified_channel_id: channel!.id,
          }),
        ]),
      );
    });

    it("records subscriptions an administrator adds, removes and restores for others, not one's own", async () => {
      const channel = await createChannel(t, 'staff-room', [t.cast.owner]);
      const admin = t.cast.admin;
      const member = t.cast.member;
      const by = { acting_user_id: admin.id, modified_user_id: member.id, modified_channel_id: channel.id };
      const add = await audited(() =>
        t.api.post('/users/me/subscriptions', admin, {
          subscriptions: [{ name: 'staff-room' }],
          principals: [member.id],
          send_new_subscription_messages: false,
        }),
      );
      expectOk(add.result);
      expect(add.rows).toEqual([row({ ...by, event_type: T.SUBSCRIPTION_CREATED })]);
      const remove = await audited(() =>
        t.api.delete('/users/me/subscriptions', admin, { subscriptions: ['staff-room'], principals: [member.id] }),
      );
      expectOk(remove.result);
      expect(remove.rows).toEqual([row({ ...by, event_type: T.SUBSCRIPTION_DEACTIVATED })]);
      const again = await audited(() =>
        t.api.post('/users/me/subscriptions', admin, {
          subscriptions: [{ name: 'staff-room' }],
          principals: [member.id],
          send_new_subscription_messages: false,
        }),
      );
      expect(again.rows).toEqual([row({ ...by, event_type: T.SUBSCRIPTION_ACTIVATED })]);
      const own = await audited(async () => {
        expectOk(await t.api.post('/users/me/subscriptions', admin, { subscriptions: [{ name: 'staff-room' }] }));
        return t.api.delete('/users/me/subscriptions', admin, { subscriptions: ['staff-room'] });
      });
      expectOk(own.result);
      expect(own.rows).toEqual([]);
      await expectNoRows(
        () => t.api.delete('/users/me/subscriptions', member, { subscriptions: ['staff-room'], principals: [t.cast.owner.id] }),
        'Insufficient permission',
      );
    });
  });

  describe('invitations', () => {
    it('records a link created, and the account, channels and groups of someone joining with it', async () => {
      const channel = await createChannel(t, 'newcomers', [t.cast.owner]);
      const { result: res, rows } = await audited(() =>
        t.api.post('/invites/multiuse', t.cast.admin, { invite_as: Role.MODERATOR, stream_ids: [channel.id] }),
      );
      expect(res.status).toBe(200);
      const invite = await t.ctx.db('multiuse_invites').orderBy('id', 'desc').first();
      expect(rows).toEqual([
        row({
          event_type: T.MULTIUSE_INVITE_CREATED,
          acting_user_id: t.cast.admin.id,
          extra: {
            multiuse_invite_id: invite!.id,
            invited_as: Role.MODERATOR,
            channel_ids: [channel.id],
            group_ids: [],
            expires_at: invite!.expires_at,
          },
        }),
      ]);
      const key = /\/join\/([a-z0-9]+)\/$/.exec(res.body.invite_link)![1];
      const join = await audited(() =>
        t.api.post(`/invites/multiuse/${key}/accept`, null, {
          email: 'joined@example.com',
          password: 'a-good-password',
          full_name: 'Jo Ined',
        }),
      );
      expect(join.result.status).toBe(200);
      // Nobody acts for a person signing up; the creation row names the link.
      const by = { acting_user_id: null, modified_user_id: join.result.body.user_id };
      expect(join.rows).toEqual(
        sorted([
          row({ ...by, event_type: T.USER_CREATED, extra: { role: Role.MODERATOR, multiuse_invite_id: invite!.id } }),
          row({ ...by, event_type: T.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, modified_group_id: await group('role:moderators') }),
          row({ ...by, event_type: T.SUBSCRIPTION_CREATED, modified_channel_id: channel.id }),
        ]),
      );
      await expectNoRows(() => t.api.post('/invites/multiuse', t.cast.member, {}), 'Insufficient permission');
    });
  });

  it('writes more than 500 rows at once (a channel created with many subscribers)', async () => {
    const members = (await createMembers(t, 'crowd', 600)).map((u) => u.id);
    const { rows } = await audited(() =>
      inTransaction(t.ctx.db, (tx) => createChannelInTx(tx, t.cast.owner, { name: 'crowded', subscriberIds: members })),
    );
    expect(rows.filter((r) => r.event_type === T.SUBSCRIPTION_CREATED)).toHaveLength(600);
  });

  describe('command line', () => {
    it('prints the newest rows first, bounded, as text and as JSON lines', async () => {
      const u = await freshUser(t, { name: 'Cli Person' });
      expectOk(await t.api.patch(`/users/${u.id}`, t.cast.admin, { full_name: 'Cli Renamed' }));
      expectOk(await t.api.patch(`/users/${u.id}`, t.cast.admin, { role: Role.GUEST }));
      const text = await auditLogCommand(t.ctx.db, { realm: '', limit: '2' });
      const lines = text.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^TIME\s+ACTING USER\s+EVENT\s+TARGET\s+CHANGE$/);
      // The role change's group rows come after its role row, so they are the newest two.
      expect(lines).toHaveLength(4);
      expect(lines[1]).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+admin@example\.com\s+USER_GROUP_DIRECT_USER_MEMBERSHIP_(ADDED|REMOVED)\s+user fresh/,
      );
      expect(lines[3]).toBe('(the newest 2; --limit N shows up to 1000)');

      const mine = await auditLogCommand(t.ctx.db, { realm: '', user: u.delivery_email.toUpperCase() });
      const rows = mine.trimEnd().split('\n').slice(1);
      expect(rows.map((l) => l.split(/\s{2,}/)[2])).toEqual(
        [
          'USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED',
          'USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED',
          'USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED',
          'USER_ROLE_CHANGED',
          'USER_FULL_NAME_CHANGED',
          'USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED',
          'USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED',
          'USER_CREATED',
        ].map((name) => expect.stringContaining(name)),
      );
      expect(rows[3]).toMatch(/admin@example\.com\s+USER_ROLE_CHANGED\s+user fresh\S+\s+member → guest$/);
      expect(rows[4]).toMatch(/USER_FULL_NAME_CHANGED\s+user fresh\S+\s+"Cli Person" → "Cli Renamed"$/);
      expect(rows[7]).toMatch(/^\S+\s+-\s+USER_CREATED\s+user fresh\S+\s+role=member$/);

      const json = (await auditLogCommand(t.ctx.db, { realm: '', user: u.delivery_email, limit: '5', json: true }))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(json).toHaveLength(5);
      expect(json[3]).toEqual({
        id: expect.any(Number),
        time: expect.stringMatching(/Z$/),
        event_type: T.USER_ROLE_CHANGED,
        event_type_name: 'USER_ROLE_CHANGED',
        acting_user: { id: t.cast.admin.id, email: 'admin@example.com' },
        modified_user: { id: u.id, email: u.delivery_email },
        modified_channel: null,
        modified_group: null,
        extra_data: { old_value: Role.MEMBER, new_value: Role.GUEST },
      });
      expect(json.map((r) => r.id)).toEqual([...json.map((r) => r.id)].sort((a, b) => b - a));
    });

    it('cuts long values so a row stays one line', async () => {
      const u = await freshUser(t);
      const long = 'L'.repeat(300);
      const field = await createProfileField(t, 'Essay', FieldType.LONG_TEXT);
      expectOk(await t.api.patch(`/users/${u.id}`, t.cast.admin, { profile_data: [{ id: field, value: long }] }));
      const [, line] = (await auditLogCommand(t.ctx.db, { realm: '', limit: '1' })).split('\n');
      expect(line).toContain('L…');
      expect(line!.length).toBeLessThan(300);
    });

    it('refuses an unknown organization or user and a limit out of range', async () => {
      await expect(auditLogCommand(t.ctx.db, { realm: 'nowhere' })).rejects.toThrow("No organization with string id 'nowhere'");
      await expect(auditLogCommand(t.ctx.db, { realm: '', user: 'ghost@example.com' })).rejects.toThrow(
        'No user ghost@example.com in that organization',
      );
      for (const limit of ['0', '1001', 'ten', '2.5']) {
        await expect(auditLogCommand(t.ctx.db, { realm: '', limit })).rejects.toThrow('--limit must be a whole number from 1 to 1000');
      }
    });
  });
});
