import { eachDatabase } from './support/databases';
import { register, sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { countQueries, createChannel, createMembers, subscribe, TestServer } from './support/server';

/** The initial state POST /register returns with the queue. */
eachDatabase('POST /register: the initial state', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let open: { id: number; recipient_id: number };
  let quiet: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general, open } = await startEventsServer(dialect));
    const { owner, member } = t.cast;
    quiet = await createChannel(t, 'quiet', [owner, member]);
    await createChannel(t, 'left', [owner, member]);
    await t.ctx.db('subscriptions').where({ user_id: member.id, recipient_id: quiet.recipient_id }).update({ is_muted: true });
    const left = await t.ctx.db('channels').where({ name: 'left' }).first('recipient_id');
    await t.ctx.db('subscriptions').where({ user_id: member.id, recipient_id: left!.recipient_id }).update({ active: false });
  });
  afterAll(() => stopEventsServer(t));

  const names = (list: Array<{ name: string }>) => list.map((c) => c.name);

  it('sends the limits, the server constants and the organization settings (realm)', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm'] });
    expect(state).toMatchObject({
      max_topic_length: 60,
      max_message_length: 10000,
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      max_file_upload_size_mib: 100,
      realm_empty_topic_display_name: 'general chat',
      server_typing_started_expiry_period_milliseconds: 15000,
      server_typing_stopped_wait_period_milliseconds: 5000,
      server_typing_started_wait_period_milliseconds: 10000,
      event_queue_longpoll_timeout_seconds: 90,
      realm_name: 'Test Organization',
      realm_allow_message_editing: true,
      realm_message_content_edit_limit_seconds: 600,
      realm_move_messages_within_stream_limit_seconds: 604800,
      realm_topics_policy: 'allow_empty_topic',
      realm_moderation_request_channel_id: -1,
    });
    expect(state.server_report_message_types.map((r: { key: string }) => r.key)).toEqual([
      'spam',
      'harassment',
      'inappropriate',
      'norms',
      'other',
    ]);
    const everyone = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:everyone' }).first('id');
    expect(state.realm_can_resolve_topics_group).toBe(everyone!.id);
    expect(state).not.toHaveProperty('realm_users');
    expect(state).not.toHaveProperty('subscriptions');
  });

  it('fetch_event_types defaults to event_types, which defaults to everything', async () => {
    const narrow = await register(t, t.cast.member, { event_types: ['message'] });
    expect(Object.keys(narrow.state).sort()).toEqual([
      'last_event_id',
      'max_message_id',
      'msg',
      'queue_id',
      'result',
      'zulip_feature_level',
      'zulip_merge_base',
      'zulip_version',
    ]);
    const all = await register(t, t.cast.member);
    for (const key of [
      'realm_users',
      'user_settings',
      'realm_user_settings_defaults',
      'subscriptions',
      'realm_user_groups',
      'unread_msgs',
      'saved_snippets',
      'realm_emoji',
      'max_topic_length',
    ]) {
      expect(all.state).toHaveProperty(key);
    }
  });

  it("lists the user's subscriptions, the channels left, and the ones they could join", async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['subscription'] });
    expect(names(state.subscriptions)).toEqual(['general', 'quiet']);
    expect(names(state.unsubscribed)).toEqual(['left']);
    expect(names(state.never_subscribed)).toEqual(['open']);
    const mine = state.subscriptions.find((s: { name: string }) => s.name === 'quiet');
    expect(mine).toMatchObject({ stream_id: quiet.id, is_muted: true, in_home_view: false, subscriber_count: 2, invite_only: false });
    // Without notification_settings_null, "inherit" reads as the user's own setting.
    expect(mine.desktop_notifications).toBe(false);
    expect(mine.can_administer_channel_group).toEqual({ direct_members: [t.cast.owner.id], direct_subgroups: [] });
    expect(mine).not.toHaveProperty('subscribers');
  });

  it('shows administrators the private channels they may see; guests only their own', async () => {
    const admin = await register(t, t.cast.admin, { fetch_event_types: ['subscription'] });
    expect(names(admin.state.never_subscribed)).toEqual(['left', 'open', 'quiet', 'secret']);
    const guest = await register(t, t.cast.guest, { fetch_event_types: ['subscription'] });
    expect(names(guest.state.subscriptions)).toEqual(['general']);
    expect(guest.state.never_subscribed).toEqual([]);
  });

  it('adds subscriber lists with include_subscribers, and keeps nulls with notification_settings_null', async () => {
    const { state } = await register(t, t.cast.member, {
      fetch_event_types: ['subscription'],
      include_subscribers: true,
      client_capabilities: { notification_settings_null: true },
    });
    const byName = new Map(state.subscriptions.map((s: { name: string }) => [s.name, s]));
    expect((byName.get('quiet') as { subscribers: number[] }).subscribers).toEqual([t.cast.owner.id, t.cast.member.id]);
    expect((byName.get('quiet') as { desktop_notifications: unknown }).desktop_notifications).toBeNull();
    expect(state.never_subscribed[0]).toMatchObject({ name: 'open', subscribers: [t.cast.owner.id] });
  });

  it("summarises unread messages in Zulip's shape", async () => {
    const { owner, member, admin } = t.cast;
    const a = await sendToChannel(t, owner, 'general', 'Plans', 'one');
    const b = await sendToChannel(t, owner, 'general', 'plans', 'two @**Test Member**');
    const c = await sendToChannel(t, owner, 'general', '', 'no topic');
    const muted = await sendToChannel(t, owner, 'quiet', 'shh', 'muted channel');
    const dm = await sendDirect(t, owner, [member], 'direct');
    const group = await sendDirect(t, admin, [member, owner], 'group');
    const read = await sendToChannel(t, owner, 'general', 'read', 'already read');
    await t.api.post('/messages/flags', member, { messages: [read], op: 'add', flag: 'read' });
    const { state } = await register(t, member, { fetch_event_types: ['message', 'update_message_flags'] });
    expect(state.unread_msgs).toEqual({
      count: 5,
      pms: [{ other_user_id: owner.id, sender_id: owner.id, unread_message_ids: [dm] }],
      streams: [
        { stream_id: general.id, topic: 'general chat', unread_message_ids: [c] },
        { stream_id: general.id, topic: 'Plans', unread_message_ids: [a, b] },
        { stream_id: quiet.id, topic: 'shh', unread_message_ids: [muted] },
      ],
      huddles: [{ user_ids_string: [owner.id, admin.id, member.id].sort((x, y) => x - y).join(','), unread_message_ids: [group] }],
      mentions: [b],
      old_unreads_missing: false,
    });
    expect(state.max_message_id).toBe(read);
    const modern = await register(t, member, {
      fetch_event_types: ['message', 'update_message_flags'],
      client_capabilities: { empty_topic_name: true },
    });
    expect(modern.state.unread_msgs.streams[0].topic).toBe('');
  });

  it('lists the users the caller can see, and the caller (realm_user)', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm_user'], client_gravatar: false });
    const active = state.realm_users.map((u: { user_id: number }) => u.user_id);
    const { owner, admin, moderator, member, guest, bot, deactivated } = t.cast;
    expect(active).toEqual([owner, admin, moderator, member, guest, bot].map((u) => u.id));
    expect(state.realm_non_active_users.map((u: { user_id: number }) => u.user_id)).toEqual([deactivated.id]);
    expect(state).toMatchObject({
      user_id: member.id,
      email: member.email,
      delivery_email: member.delivery_email,
      full_name: 'Test Member',
      is_admin: false,
      is_guest: false,
      is_moderator: false,
    });
    expect(state.realm_users[0]).toMatchObject({ user_id: owner.id, role: 100, is_owner: true, profile_data: {} });
  });

  it('restricts the user list of someone outside can_access_all_users_group', async () => {
    const admins = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:administrators' }).first('id');
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: admins!.id });
    try {
      const outsider = (await createMembers(t, 'outsider', 1))[0]!;
      await subscribe(t, open, [outsider]);
      const { state } = await register(t, outsider, { fetch_event_types: ['realm_user'] });
      const ids = state.realm_users.map((u: { user_id: number }) => u.user_id).sort((a: number, b: number) => a - b);
      expect(ids).toEqual([t.cast.owner.id, t.cast.bot.id, outsider.id].sort((a, b) => a - b));
    } finally {
      const everyone = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:everyone' }).first('id');
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: everyone!.id });
    }
  });

  it('sends personal settings, organization defaults and groups', async () => {
    const { state } = await register(t, t.cast.member, {
      fetch_event_types: ['user_settings', 'realm_user_settings_defaults', 'realm_user_groups'],
    });
    expect(state.user_settings).toMatchObject({
      receives_typing_notifications: true,
      timezone: '',
      emojiset: 'google',
      available_notification_sounds: expect.any(Array),
    });
    expect(state.realm_user_settings_defaults).not.toHaveProperty('timezone');
    expect(state.realm_user_settings_defaults).toMatchObject({ web_home_view: 'inbox', emojiset_choices: expect.any(Array) });
    const byName = new Map(state.realm_user_groups.map((g: { name: string }) => [g.name, g]));
    const members = byName.get('role:members') as { is_system_group: boolean; members: number[] };
    expect(members.is_system_group).toBe(true);
    expect(members.members).toEqual(expect.arrayContaining([t.cast.member.id, t.cast.bot.id]));
    expect(members.members).not.toContain(t.cast.owner.id); // owners are members through subgroups, not directly
    expect((byName.get('role:members') as { direct_subgroup_ids: number[] }).direct_subgroup_ids).toHaveLength(1);
    expect([...byName.keys()]).not.toContain(null);
  });

  it('reads the state in a fixed number of statements, however large the organization', async () => {
    const measure = async () =>
      (await countQueries(t, () => t.api.post('/register', t.cast.member, { include_subscribers: true }))).queries;
    // The first register warms the per-node caches (linkifiers, domains, playgrounds), which a
    // growing organization does not empty: counted from the second.
    await measure();
    const before = await measure();
    const many = await createMembers(t, 'crowd', 20);
    for (let i = 0; i < 10; i++) await createChannel(t, `crowd-${i}`, many);
    for (const u of many.slice(0, 5)) await sendDirect(t, u, [t.cast.member], 'hi');
    await t.ctx.missedMessages.whenIdle();
    expect(await measure()).toBe(before);
  });
});
