import { eachDatabase } from './support/databases';
import type { TestServer } from './support/server';
import { pending, register, startEventsServer, stopEventsServer } from './support/events';
import { captureEvents, freshUser, systemGroupId, systemGroupsOf } from './users-fixtures';
import { Role } from '../src/domain/roles';

eachDatabase('PATCH /realm', (dialect) => {
  let t: TestServer;
  let secret: { id: number };
  let open: { id: number };
  beforeAll(async () => {
    ({ t, secret, open } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  const realm = async () => (await t.ctx.db('realms').where({ id: t.realmId }).first())!;
  const audit = async () =>
    (await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: 207 }).orderBy('id')).map((r) => ({
      actor: Number(r.acting_user_id),
      extra: typeof r.extra_data === 'string' ? JSON.parse(r.extra_data) : r.extra_data,
    }));
  const patch = (who: keyof TestServer['cast'], fields: Record<string, unknown>) => t.api.patch('/realm', t.cast[who], fields);

  /** A refused request: exactly this error, and nothing written, audited or announced. */
  const expectRefused = async (who: keyof TestServer['cast'], fields: Record<string, unknown>, msg: string, code = 'BAD_REQUEST') => {
    const [before, auditBefore] = [await realm(), (await audit()).length];
    const { result: res, deliveries } = await captureEvents(t, () => patch(who, fields));
    expect(res.body).toEqual({ result: 'error', msg, code });
    expect(res.status).toBe(400);
    expect(await realm()).toEqual(before);
    expect((await audit()).length).toBe(auditBefore);
    expect(deliveries).toEqual([]);
  };

  it('changes simple settings, answers what changed, tells every active user, audits, and register shows it at once', async () => {
    const member = await register(t, t.cast.member, { event_types: ['realm'] });
    const guest = await register(t, t.cast.guest, { event_types: ['realm'] });
    const auditBefore = (await audit()).length;
    const { result: res, deliveries } = await captureEvents(t, () =>
      patch('admin', { name: 'Renamed Org', enable_read_receipts: false, default_language: 'de', description: 'Hello **world**' }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      result: 'success',
      msg: '',
      name: 'updated',
      description: 'updated',
      default_language: 'updated',
      enable_read_receipts: false,
    });
    const events = deliveries.map((d) => d.event);
    expect(events).toEqual(
      expect.arrayContaining([
        { type: 'realm', op: 'update', property: 'name', value: 'Renamed Org' },
        { type: 'realm', op: 'update', property: 'enable_read_receipts', value: false },
        { type: 'realm', op: 'update', property: 'default_language', value: 'de' },
        {
          type: 'realm',
          op: 'update_dict',
          property: 'default',
          data: { description: 'Hello **world**', rendered_description: '<p>Hello <strong>world</strong></p>' },
        },
      ]),
    );
    expect(events).toHaveLength(4);
    for (const d of deliveries) {
      expect(d.userIds).toEqual(expect.arrayContaining([t.cast.owner.id, t.cast.guest.id, t.cast.bot.id, t.cast.member.id]));
      expect(d.userIds).not.toContain(t.cast.deactivated.id);
    }
    expect((await pending(t, member)).map((e) => e.property)).toEqual(expect.arrayContaining(['name', 'default']));
    expect((await pending(t, guest)).length).toBe(4);
    const rows = (await audit()).slice(auditBefore);
    expect(rows).toEqual(
      expect.arrayContaining([
        { actor: t.cast.admin.id, extra: { old_value: 'Test Organization', new_value: 'Renamed Org', property: 'name' } },
        { actor: t.cast.admin.id, extra: { old_value: true, new_value: false, property: 'enable_read_receipts' } },
      ]),
    );
    expect(rows).toHaveLength(4);
    const state = (await register(t, t.cast.member)).state;
    expect(state).toMatchObject({ realm_name: 'Renamed Org', realm_enable_read_receipts: false, realm_default_language: 'de' });
  });

  it('changes nothing, and says nothing, for values already set or no parameters', async () => {
    const { result: res, deliveries } = await captureEvents(t, () => patch('admin', { name: 'Renamed Org' }));
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(deliveries).toEqual([]);
    expect((await patch('admin', {})).body).toEqual({ result: 'success', msg: '' });
  });

  it('sends the editing settings and topics_policy as update_dict, the other limits as update', async () => {
    const { result: res, deliveries } = await captureEvents(t, () =>
      patch('admin', {
        allow_message_editing: false,
        message_content_edit_limit_seconds: 'unlimited',
        message_content_delete_limit_seconds: 120,
        topics_policy: 'disable_empty_topic',
        message_edit_history_visibility_policy: 'moves',
      }),
    );
    expect(res.body).toMatchObject({
      allow_message_editing: false,
      message_content_edit_limit_seconds: null,
      message_content_delete_limit_seconds: 120,
      topics_policy: 'disable_empty_topic',
      message_edit_history_visibility_policy: 'moves',
    });
    expect(deliveries.map((d) => d.event)).toEqual(
      expect.arrayContaining([
        { type: 'realm', op: 'update_dict', property: 'default', data: { allow_message_editing: false } },
        { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: null } },
        { type: 'realm', op: 'update', property: 'message_content_delete_limit_seconds', value: 120 },
        { type: 'realm', op: 'update_dict', property: 'default', data: { topics_policy: 'disable_empty_topic', mandatory_topics: true } },
        { type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: 'moves' },
      ]),
    );
    expect(await realm()).toMatchObject({ message_content_edit_limit_seconds: null, message_content_delete_limit_seconds: 120 });
    const state = (await register(t, t.cast.member)).state;
    expect(state).toMatchObject({
      realm_allow_message_editing: false,
      realm_mandatory_topics: true,
      realm_message_edit_history_visibility_policy: 'moves',
    });
  });

  it('changes a group setting with {new, old}, announced as update_dict and audited with both values', async () => {
    const members = await systemGroupId(t, 'role:members');
    const admins = await systemGroupId(t, 'role:administrators');
    const auditBefore = (await audit()).length;
    const { result: res, deliveries } = await captureEvents(t, () =>
      patch('admin', { can_add_custom_emoji_group: { new: admins, old: members } }),
    );
    expect(res.body).toEqual({ result: 'success', msg: '', can_add_custom_emoji_group: admins });
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm', op: 'update_dict', property: 'default', data: { can_add_custom_emoji_group: admins } },
    ]);
    expect((await audit()).slice(auditBefore)).toEqual([
      { actor: t.cast.admin.id, extra: { old_value: members, new_value: admins, property: 'can_add_custom_emoji_group' } },
    ]);
    // An anonymous value, and back to a named group: the anonymous group goes.
    const anon = { direct_members: [t.cast.member.id], direct_subgroups: [admins] };
    expect((await patch('admin', { can_add_custom_emoji_group: { new: anon } })).body.can_add_custom_emoji_group).toEqual(anon);
    const anonId = (await realm()).can_add_custom_emoji_group;
    expect((await register(t, t.cast.member)).state.realm_can_add_custom_emoji_group).toEqual(anon);
    // The member may now add emoji (the setting governs at once).
    await patch('admin', { can_add_custom_emoji_group: { new: { direct_members: [], direct_subgroups: [members] }, old: anon } });
    expect((await realm()).can_add_custom_emoji_group).toBe(members);
    expect(await t.ctx.db('user_groups').where({ id: anonId })).toEqual([]);
  });

  it('refuses a stale old value with EXPECTATION_MISMATCH', async () => {
    const admins = await systemGroupId(t, 'role:administrators');
    const owners = await systemGroupId(t, 'role:owners');
    await expectRefused(
      'admin',
      { can_delete_any_message_group: { new: owners, old: await systemGroupId(t, 'role:moderators') }, name: 'Not Saved' },
      "'old' value does not match the expected value.",
      'EXPECTATION_MISMATCH',
    );
    expect((await realm()).can_delete_any_message_group).toBe(admins);
  });

  it.each([
    [
      { can_create_public_channel_group: { new: 'everyone' } },
      "'can_create_public_channel_group' setting cannot be set to 'role:everyone' group.",
    ],
    [{ can_manage_all_groups: { new: 'nobody' } }, "'can_manage_all_groups' setting cannot be set to 'role:nobody' group."],
    [
      { can_delete_own_message_group: { new: 'internet' } },
      "'can_delete_own_message_group' setting cannot be set to 'role:internet' group.",
    ],
    [
      { can_access_all_users_group: { new: 'admins' } },
      "'can_access_all_users_group' setting cannot be set to 'role:administrators' group.",
    ],
    [
      { can_access_all_users_group: { new: { direct_members: ['member'], direct_subgroups: [] } } },
      "'can_access_all_users_group' must be a system user group.",
    ],
    [{ can_resolve_topics_group: { new: 999999 } }, 'Invalid user group ID: 999999'],
    [{ can_resolve_topics_group: { new: { direct_members: [999999], direct_subgroups: [] } } }, 'Invalid user ID: 999999'],
  ])('refuses the group value %j', async (raw, msg) => {
    const names: Record<string, string> = {
      everyone: 'role:everyone',
      nobody: 'role:nobody',
      internet: 'role:internet',
      admins: 'role:administrators',
    };
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw) as Array<[string, { new: unknown }]>) {
      const value = v.new as string | number | { direct_members: Array<number | string>; direct_subgroups: number[] };
      if (typeof value === 'string') fields[k] = { new: await systemGroupId(t, names[value]!) };
      else if (typeof value === 'object')
        fields[k] = {
          new: { ...value, direct_members: value.direct_members.map((m: number | string) => (m === 'member' ? t.cast.member.id : m)) },
        };
      else fields[k] = v;
    }
    await expectRefused('owner', fields, msg);
  });

  it.each([
    [{ message_content_edit_limit_seconds: 0 }, "Bad value for 'message_content_edit_limit_seconds': 0"],
    [{ move_messages_within_stream_limit_seconds: 'forever' }, "Bad value for 'move_messages_within_stream_limit_seconds': forever"],
    [{ message_retention_days: 'forever' }, "Bad value for 'message_retention_days': forever"],
    [{ message_retention_days: -5 }, "Bad value for 'message_retention_days': -5"],
    [{ default_language: 'xx' }, "Invalid language 'xx'"],
    [{ name: '   ' }, "Organization name can't be empty."],
    [{ name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
    [{ invite_required: '"yes"' }, 'invite_required is not a boolean'],
    [{ new_stream_announcements_stream_id: 999999 }, 'Invalid channel ID'],
    [{ string_id: 'newsub' }, 'Must be a demo organization.'],
  ])('refuses %j', async (fields, msg) => {
    await expectRefused('owner', fields, msg);
  });

  it('refuses a public moderation request channel, accepts a private one and -1 for none', async () => {
    await expectRefused('admin', { moderation_request_channel_id: open.id }, 'Moderation request channel must be private.');
    const { result: res, deliveries } = await captureEvents(t, () => patch('admin', { moderation_request_channel_id: secret.id }));
    expect(res.body).toMatchObject({ moderation_request_channel_id: secret.id });
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm', op: 'update', property: 'moderation_request_channel_id', value: secret.id },
    ]);
    expect((await audit()).at(-1)!.extra).toEqual({ old_value: null, new_value: secret.id, property: 'moderation_request_channel' });
    expect((await register(t, t.cast.admin)).state.realm_moderation_request_channel_id).toBe(secret.id);
    expect((await patch('admin', { moderation_request_channel_id: -1 })).body).toMatchObject({ moderation_request_channel_id: -1 });
    expect((await realm()).moderation_request_channel_id).toBeNull();
  });

  it.each([
    ['moderator', { name: 'X1' }, 'Must be an organization administrator'],
    ['member', { name: 'X1' }, 'Must be an organization administrator'],
    ['guest', { name: 'X1' }, 'Must be an organization administrator'],
    ['admin', { invite_required: false }, 'Must be an organization owner'],
    ['admin', { waiting_period_threshold: 3 }, 'Must be an organization owner'],
    ['admin', { emails_restricted_to_domains: true }, 'Must be an organization owner'],
    ['admin', { disallow_disposable_email_addresses: false }, 'Must be an organization owner'],
    ['admin', { message_retention_days: 30 }, 'Must be an organization owner'],
    ['admin', { can_create_groups: { new: 1 } }, 'Must be an organization owner'],
    ['admin', { can_invite_users_group: { new: 1 } }, 'Must be an organization owner'],
    ['admin', { can_manage_all_groups: { new: 1 } }, 'Must be an organization owner'],
    ['admin', { can_manage_billing_group: { new: 1 } }, 'Must be an organization owner'],
    ['admin', { create_multiuse_invite_group: { new: 1 } }, 'Must be an organization owner'],
    ['admin', { string_id: 'abc' }, 'Must be an organization owner'],
  ] as const)('refuses %s changing %j', async (who, fields, msg) => {
    await expectRefused(who, fields, msg, 'UNAUTHORIZED_PRINCIPAL');
  });

  it('lets an owner set the retention period (no plan limits it) and "unlimited" back to -1', async () => {
    const { result: res, deliveries } = await captureEvents(t, () =>
      patch('owner', { message_retention_days: 30, invite_required: false }),
    );
    expect(res.body).toMatchObject({ message_retention_days: 30, invite_required: false });
    expect(deliveries.map((d) => d.event)).toEqual(
      expect.arrayContaining([{ type: 'realm', op: 'update', property: 'message_retention_days', value: 30 }]),
    );
    expect((await register(t, t.cast.member)).state.realm_message_retention_days).toBe(30);
    expect((await patch('owner', { message_retention_days: 'unlimited' })).body).toMatchObject({ message_retention_days: -1 });
    expect((await realm()).message_retention_days).toBe(-1);
  });

  it('moves members in and out of role:fullmembers with a new waiting period', async () => {
    const newcomer = await freshUser(t, { role: Role.MEMBER });
    expect(await systemGroupsOf(t, newcomer.id)).toEqual(['role:fullmembers', 'role:members']);
    const { deliveries } = await captureEvents(t, () => patch('owner', { waiting_period_threshold: 10 }));
    expect(await systemGroupsOf(t, newcomer.id)).toEqual(['role:members']);
    expect(deliveries.map((d) => d.event)).toEqual(
      expect.arrayContaining([
        { type: 'realm', op: 'update', property: 'waiting_period_threshold', value: 10 },
        expect.objectContaining({ type: 'user_group', op: 'remove_members', user_ids: [newcomer.id] }),
      ]),
    );
    await patch('owner', { waiting_period_threshold: 0 });
    expect(await systemGroupsOf(t, newcomer.id)).toEqual(['role:fullmembers', 'role:members']);
  });
});
