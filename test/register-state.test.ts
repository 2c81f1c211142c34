import request from 'supertest';
import { eachDatabase } from './support/databases';
import { register, sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import type { TestServer } from './support/server';
import { createProfileField, freshUser, systemGroupId } from './users-fixtures';

/** The keys every POST /register answer has, whatever was asked for. */
const ALWAYS = ['result', 'msg', 'queue_id', 'last_event_id', 'zulip_feature_level', 'zulip_version', 'zulip_merge_base'];

/**
 * Every key Zulip's POST /register sends for each fetch_event_type it
 * documents (feature level 496). Each must be present when its type is asked for, and no
 * other key may come along. The shapes are the contract's: every response
 * is checked against it (test/support/contract.ts).
 */
const KEYS_BY_TYPE: Record<string, string[]> = {
  alert_words: ['alert_words'],
  device: ['devices'],
  custom_profile_fields: ['custom_profile_fields', 'custom_profile_field_types'],
  onboarding_steps: ['onboarding_steps', 'navigation_tour_video_url'],
  message: ['max_message_id'],
  saved_snippets: ['saved_snippets'],
  navigation_views: ['navigation_views'],
  drafts: ['drafts'],
  scheduled_messages: ['scheduled_messages'],
  reminders: ['reminders'],
  muted_topics: ['muted_topics'],
  muted_users: ['muted_users'],
  presence: ['presences', 'presence_last_update_id', 'server_timestamp'],
  realm_user_groups: ['realm_user_groups'],
  realm: [
    // Limits and server constants.
    'max_topic_length',
    'max_message_length',
    'max_stream_name_length',
    'max_stream_description_length',
    'max_channel_folder_name_length',
    'max_channel_folder_description_length',
    'max_file_upload_size_mib',
    'max_avatar_file_size_mib',
    'max_icon_file_size_mib',
    'max_logo_file_size_mib',
    'max_bulk_new_subscription_messages',
    'max_reminder_note_length',
    'password_min_length',
    'password_max_length',
    'password_min_guesses',
    'event_queue_longpoll_timeout_seconds',
    'server_report_message_types',
    'server_supported_permission_settings',
    'server_typing_started_expiry_period_milliseconds',
    'server_typing_stopped_wait_period_milliseconds',
    'server_typing_started_wait_period_milliseconds',
    'server_presence_ping_interval_seconds',
    'server_presence_offline_threshold_seconds',
    'server_inline_image_preview',
    'server_inline_url_embed_preview',
    'server_thumbnail_formats',
    'server_avatar_changes_disabled',
    'server_name_changes_disabled',
    'server_web_public_streams_enabled',
    'server_emoji_data_url',
    'server_needs_upgrade',
    'server_can_summarize_topics',
    'server_generation',
    'server_jitsi_server_url',
    'server_min_deactivated_realm_deletion_days',
    'server_max_deactivated_realm_deletion_days',
    'settings_send_digest_emails',
    'development_environment',
    'jitsi_server_url',
    'gif_rating_policy_options',
    'zulip_plan_is_not_limited',
    'upgrade_text_for_wide_organization_logo',
    // The organization.
    'realm_name',
    'realm_description',
    'realm_url',
    'realm_uri',
    'realm_uuid',
    'realm_date_created',
    'realm_default_language',
    'realm_waiting_period_threshold',
    'realm_enable_spectator_access',
    'realm_presence_disabled',
    'realm_enable_read_receipts',
    'realm_allow_message_editing',
    'realm_message_content_edit_limit_seconds',
    'realm_move_messages_within_stream_limit_seconds',
    'realm_move_messages_between_streams_limit_seconds',
    'realm_message_content_delete_limit_seconds',
    'realm_message_edit_history_visibility_policy',
    'realm_allow_edit_history',
    'realm_topics_policy',
    'realm_mandatory_topics',
    'realm_empty_topic_display_name',
    'realm_moderation_request_channel_id',
    'realm_new_stream_announcements_stream_id',
    'realm_signup_announcements_stream_id',
    'realm_zulip_update_announcements_stream_id',
    'realm_invite_required',
    'realm_emails_restricted_to_domains',
    'realm_disallow_disposable_email_addresses',
    'realm_message_retention_days',
    'realm_authentication_methods',
    'realm_email_auth_enabled',
    'realm_password_auth_enabled',
    'realm_avatar_changes_disabled',
    'realm_name_changes_disabled',
    'realm_email_changes_disabled',
    'realm_require_unique_names',
    'realm_default_code_block_language',
    'realm_digest_emails_enabled',
    'realm_digest_weekday',
    'realm_send_welcome_emails',
    'realm_message_content_allowed_in_email_notifications',
    'realm_welcome_message_custom_text',
    'realm_send_channel_events_messages',
    'realm_enable_guest_user_indicator',
    'realm_enable_guest_user_dm_warning',
    'realm_inline_image_preview',
    'realm_inline_url_embed_preview',
    'realm_media_preview_size',
    'realm_default_avatar_source',
    'realm_video_chat_provider',
    'realm_available_video_chat_providers',
    'realm_jitsi_server_url',
    'realm_gif_rating_policy',
    'realm_want_advertise_in_communities_directory',
    'realm_owner_full_content_access',
    'realm_push_notifications_enabled',
    'realm_push_notifications_enabled_end_timestamp',
    'realm_require_e2ee_push_notifications',
    'realm_upload_quota_mib',
    'realm_icon_url',
    'realm_icon_source',
    'realm_logo_url',
    'realm_logo_source',
    'realm_night_logo_url',
    'realm_night_logo_source',
    'realm_bot_domain',
    'realm_org_type',
    'realm_plan_type',
    'realm_default_external_accounts',
    'realm_create_public_stream_policy',
    'realm_create_private_stream_policy',
    'realm_create_web_public_stream_policy',
    'realm_wildcard_mention_policy',
    // Group-setting values.
    'realm_can_access_all_users_group',
    'realm_can_add_custom_emoji_group',
    'realm_can_add_subscribers_group',
    'realm_can_create_bots_group',
    'realm_can_create_groups',
    'realm_can_create_public_channel_group',
    'realm_can_create_private_channel_group',
    'realm_can_create_web_public_channel_group',
    'realm_can_create_write_only_bots_group',
    'realm_can_delete_any_message_group',
    'realm_can_delete_own_message_group',
    'realm_can_invite_users_group',
    'realm_can_manage_all_groups',
    'realm_can_manage_billing_group',
    'realm_can_mention_many_users_group',
    'realm_can_move_messages_between_channels_group',
    'realm_can_move_messages_between_topics_group',
    'realm_can_resolve_topics_group',
    'realm_can_set_delete_message_policy_group',
    'realm_can_set_topics_policy_group',
    'realm_can_summarize_topics_group',
    'realm_create_multiuse_invite_group',
    'realm_direct_message_initiator_group',
    'realm_direct_message_permission_group',
    'realm_workplace_users_group',
  ],
  realm_user_settings_defaults: ['realm_user_settings_defaults'],
  realm_domains: ['realm_domains'],
  realm_emoji: ['realm_emoji'],
  realm_linkifiers: ['realm_linkifiers'],
  realm_filters: ['realm_filters'],
  realm_playgrounds: ['realm_playgrounds'],
  realm_billing: ['realm_billing'],
  realm_user: [
    'realm_users',
    'realm_non_active_users',
    'cross_realm_bots',
    'avatar_source',
    'avatar_url',
    'avatar_url_medium',
    'can_create_streams',
    'can_create_public_streams',
    'can_create_private_streams',
    'can_create_web_public_streams',
    'can_invite_others_to_realm',
    'is_admin',
    'is_owner',
    'is_moderator',
    'is_guest',
    'user_id',
    'email',
    'delivery_email',
    'full_name',
  ],
  realm_bot: ['realm_bots'],
  realm_embedded_bots: ['realm_embedded_bots'],
  realm_incoming_webhook_bots: ['realm_incoming_webhook_bots'],
  recent_private_conversations: ['recent_private_conversations'],
  subscription: ['subscriptions', 'unsubscribed', 'never_subscribed'],
  channel_folders: ['channel_folders'],
  starred_messages: ['starred_messages'],
  stream: ['streams'],
  default_streams: ['realm_default_streams'],
  default_stream_groups: ['realm_default_stream_groups'],
  stop_words: ['stop_words'],
  user_settings: ['user_settings'],
  user_status: ['user_status'],
  user_topic: ['user_topics'],
  video_calls: ['has_zoom_token'],
  giphy: ['giphy_api_key'],
  tenor: ['tenor_api_key'],
};

/**
 * What zulip-flutter's InitialSnapshot.fromJson cannot do without (it reads
 * them as non-nullable): a client registering for everything must get each.
 */
const FLUTTER_REQUIRED = [
  'alert_words',
  'custom_profile_fields',
  'max_stream_name_length',
  'max_topic_length',
  'server_presence_ping_interval_seconds',
  'server_presence_offline_threshold_seconds',
  'muted_users',
  'presences',
  'realm_emoji',
  'realm_user_groups',
  'recent_private_conversations',
  'subscriptions',
  'unread_msgs',
  'streams',
  'user_status',
  'user_settings',
  'user_topics',
  'realm_wildcard_mention_policy',
  'realm_mandatory_topics',
  'realm_name',
  'realm_waiting_period_threshold',
  'realm_allow_message_editing',
  'realm_enable_read_receipts',
  'realm_icon_url',
  'realm_presence_disabled',
  'realm_default_external_accounts',
  'max_file_upload_size_mib',
  'server_emoji_data_url',
  'realm_users',
  'realm_non_active_users',
  'cross_realm_bots',
];

const sorted = (keys: string[]) => [...keys].sort();
const ids = (list: Array<{ stream_id?: number; id?: number }>) => list.map((x) => x.stream_id ?? x.id);

eachDatabase('POST /register: every key of every event type', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let open: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general, open, secret } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  for (const [type, keys] of Object.entries(KEYS_BY_TYPE)) {
    it(`sends exactly Zulip's keys for ${type}`, async () => {
      const { state } = await register(t, t.cast.member, { fetch_event_types: [type] });
      expect(sorted(Object.keys(state))).toEqual(sorted([...ALWAYS, ...keys]));
    });
  }

  it('sends unread_msgs for message with update_message_flags', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['message', 'update_message_flags'] });
    expect(sorted(Object.keys(state))).toEqual(sorted([...ALWAYS, 'max_message_id', 'unread_msgs']));
  });

  it('sends every key of every type, and all a zulip-flutter client requires, when asked for everything', async () => {
    const { state } = await register(t, t.cast.member);
    const every = Object.values(KEYS_BY_TYPE).flat();
    expect(sorted(Object.keys(state))).toEqual(sorted([...new Set([...ALWAYS, ...every, 'unread_msgs'])]));
    for (const key of FLUTTER_REQUIRED) expect(state[key]).toBeDefined();
    for (const key of FLUTTER_REQUIRED) expect(state[key]).not.toBeNull();
  });

  it('leaves muted_topics out when user_topic is asked for by name, as Zulip does', async () => {
    expect(Object.keys((await register(t, t.cast.member, { fetch_event_types: ['muted_topics', 'user_topic'] })).state)).not.toContain(
      'muted_topics',
    );
    // event_types stands in for fetch_event_types, with the same rule.
    expect(Object.keys((await register(t, t.cast.member, { event_types: ['muted_topics', 'user_topic'] })).state)).not.toContain(
      'muted_topics',
    );
    expect((await register(t, t.cast.member, { fetch_event_types: ['muted_topics'] })).state.muted_topics).toEqual([]);
  });

  it('sends the empty values where Parley has no such objects', async () => {
    const { state } = await register(t, t.cast.member);
    for (const key of [
      'drafts',
      'scheduled_messages',
      'reminders',
      'navigation_views',
      'onboarding_steps',
      'muted_users',
      'realm_domains',
      'realm_linkifiers',
      'realm_filters',
      'realm_playgrounds',
      'realm_embedded_bots',
      'realm_default_stream_groups',
      'stop_words',
      'cross_realm_bots',
      'server_thumbnail_formats',
      'channel_folders',
      'custom_profile_fields',
    ]) {
      expect([key, state[key]]).toEqual([key, []]);
    }
    expect(state).toMatchObject({
      navigation_tour_video_url: null,
      realm_billing: { has_pending_sponsorship_request: false },
      has_zoom_token: false,
      giphy_api_key: '',
      tenor_api_key: '',
      realm_video_chat_provider: 0,
      realm_available_video_chat_providers: { disabled: { name: 'None', id: 0 } },
      realm_upload_quota_mib: null,
      realm_plan_type: 1,
      zulip_plan_is_not_limited: true,
    });
    expect(Object.keys(state.custom_profile_field_types).sort()).toEqual(
      ['DATE', 'EXTERNAL_ACCOUNT', 'LONG_TEXT', 'PRONOUNS', 'SELECT', 'SHORT_TEXT', 'URL', 'USER'].sort(),
    );
    expect(state.custom_profile_field_types.PRONOUNS.id).toBe(8);
  });

  it("sends the organization's stored settings: retention, announcement channels, creation date, invitations", async () => {
    const before = (await register(t, t.cast.member, { fetch_event_types: ['realm'] })).state;
    // NULL keeps messages for ever: Zulip's -1.
    expect(before.realm_message_retention_days).toBe(-1);
    expect(before.realm_new_stream_announcements_stream_id).toBe(-1);
    const realm = await t.ctx.db('realms').where({ id: t.realmId }).first();
    expect(before.realm_date_created).toBe(Number(realm!.date_created));
    await t.ctx
      .db('realms')
      .where({ id: t.realmId })
      .update({ message_retention_days: 30, new_stream_announcements_stream_id: general.id, invite_required: false });
    try {
      const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm'] });
      expect(state).toMatchObject({
        realm_message_retention_days: 30,
        realm_new_stream_announcements_stream_id: general.id,
        realm_signup_announcements_stream_id: -1,
        realm_invite_required: false,
        realm_disallow_disposable_email_addresses: true,
        realm_uuid: before.realm_uuid,
      });
      expect(state.realm_uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      await t.ctx
        .db('realms')
        .where({ id: t.realmId })
        .update({ message_retention_days: null, new_stream_announcements_stream_id: null, invite_required: true });
    }
  });

  it('computes the deprecated integer policies from the group settings', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm'] });
    // The defaults: members create channels, owners web-public ones, administrators mention many.
    expect(state).toMatchObject({
      realm_create_public_stream_policy: 1,
      realm_create_private_stream_policy: 1,
      realm_create_web_public_stream_policy: 7,
      realm_wildcard_mention_policy: 5,
      realm_workplace_users_group: await systemGroupId(t, 'role:everyone'),
    });
    const moderators = await systemGroupId(t, 'role:moderators');
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_mention_many_users_group: moderators });
    try {
      expect((await register(t, t.cast.member, { fetch_event_types: ['realm'] })).state.realm_wildcard_mention_policy).toBe(7);
    } finally {
      await t.ctx
        .db('realms')
        .where({ id: t.realmId })
        .update({ can_mention_many_users_group: await systemGroupId(t, 'role:administrators') });
    }
  });

  it("gives the current user's permissions and moderator status by role and group settings", async () => {
    const flags = async (who: keyof TestServer['cast']) => {
      const { state } = await register(t, t.cast[who], { fetch_event_types: ['realm_user'] });
      return {
        is_moderator: state.is_moderator,
        can_create_streams: state.can_create_streams,
        can_create_public_streams: state.can_create_public_streams,
        can_create_private_streams: state.can_create_private_streams,
        can_create_web_public_streams: state.can_create_web_public_streams,
        can_invite_others_to_realm: state.can_invite_others_to_realm,
      };
    };
    const none = {
      can_create_streams: false,
      can_create_public_streams: false,
      can_create_private_streams: false,
      can_create_web_public_streams: false,
      can_invite_others_to_realm: false,
    };
    const membersCan = { ...none, can_create_streams: true, can_create_public_streams: true, can_create_private_streams: true };
    expect(await flags('member')).toEqual({ is_moderator: false, ...membersCan, can_invite_others_to_realm: true });
    // Moderators and up are moderators since feature level 380.
    expect(await flags('moderator')).toMatchObject({ is_moderator: true });
    expect(await flags('admin')).toMatchObject({ is_moderator: true });
    expect(await flags('owner')).toEqual({ is_moderator: true, ...membersCan, can_invite_others_to_realm: true });
    expect(await flags('guest')).toEqual({ is_moderator: false, ...none });
    // Never a guest, whatever group the setting names (as POST /users/me/subscriptions refuses them).
    const everyone = await systemGroupId(t, 'role:everyone');
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_create_public_channel_group: everyone });
    try {
      expect(await flags('guest')).toEqual({ is_moderator: false, ...none });
    } finally {
      await t.ctx
        .db('realms')
        .where({ id: t.realmId })
        .update({ can_create_public_channel_group: await systemGroupId(t, 'role:members') });
    }

    // Web-public channels need spectators allowed; invitations follow can_invite_users_group.
    const admins = await systemGroupId(t, 'role:administrators');
    await t.ctx.db('realms').where({ id: t.realmId }).update({ enable_spectator_access: true, can_invite_users_group: admins });
    try {
      expect(await flags('owner')).toMatchObject({ can_create_web_public_streams: true, can_invite_others_to_realm: true });
      expect(await flags('member')).toMatchObject({ can_create_web_public_streams: false, can_invite_others_to_realm: false });
    } finally {
      await t.ctx
        .db('realms')
        .where({ id: t.realmId })
        .update({ enable_spectator_access: false, can_invite_users_group: await systemGroupId(t, 'role:members') });
    }
  });

  it('lists users without is_active, which their list already says', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm_user'] });
    for (const u of [...state.realm_users, ...state.realm_non_active_users]) expect(u).not.toHaveProperty('is_active');
    expect(state.realm_non_active_users.map((u: { user_id: number }) => u.user_id)).toEqual([t.cast.deactivated.id]);
  });

  it('lists the starred messages, ascending', async () => {
    const { member, owner } = t.cast;
    const a = await sendToChannel(t, owner, 'general', 'stars', 'one');
    const b = await sendToChannel(t, owner, 'general', 'stars', 'two');
    const c = await sendDirect(t, owner, [member], 'three');
    await t.api.post('/messages/flags', member, { messages: [c, a, b], op: 'add', flag: 'starred' });
    await t.api.post('/messages/flags', member, { messages: [b], op: 'remove', flag: 'starred' });
    const { state } = await register(t, member, { fetch_event_types: ['starred_messages'] });
    expect(state.starred_messages).toEqual([a, c]);
    expect((await register(t, owner, { fetch_event_types: ['starred_messages'] })).state.starred_messages).toEqual([]);
  });

  it('lists recent direct message conversations, newest first, with the other participants', async () => {
    const user = await freshUser(t, { name: 'Conversation Haver' });
    const { owner, admin, member } = t.cast;
    await sendDirect(t, owner, [user], 'one to one');
    const group = await sendDirect(t, user, [admin, member], 'a group');
    const self = await sendDirect(t, user, [user], 'a note to self');
    const latest = await sendDirect(t, user, [owner], 'again');
    await sendToChannel(t, owner, 'general', 'not a dm', 'channel messages do not count');
    const { state } = await register(t, user, { fetch_event_types: ['recent_private_conversations'] });
    expect(state.recent_private_conversations).toEqual([
      { max_message_id: latest, user_ids: [owner.id] },
      { max_message_id: self, user_ids: [] },
      { max_message_id: group, user_ids: [admin.id, member.id].sort((x, y) => x - y) },
    ]);
  });

  it('lists every channel the user may know of in streams; the default channels; not for guests', async () => {
    await t.ctx.db('channels').where({ id: open.id }).update({ is_default: true });
    try {
      const member = (await register(t, t.cast.member, { fetch_event_types: ['stream', 'default_streams'] })).state;
      expect(ids(member.streams)).toEqual([general.id, open.id]);
      expect(member.streams[0]).toMatchObject({ name: 'general', subscriber_count: 6, invite_only: false });
      expect(member.streams[0]).not.toHaveProperty('subscribers');
      expect(member.realm_default_streams).toEqual([open.id]);
      const admin = (await register(t, t.cast.admin, { fetch_event_types: ['stream'] })).state;
      expect(ids(admin.streams)).toEqual([general.id, open.id, secret.id]);
      const guest = (await register(t, t.cast.guest, { fetch_event_types: ['stream', 'default_streams'] })).state;
      expect(ids(guest.streams)).toEqual([general.id]);
      expect(guest.realm_default_streams).toEqual([]);
      // A web-public channel is listed even for a guest, who may read it.
      await t.ctx.db('channels').where({ id: open.id }).update({ is_web_public: true });
      expect(ids((await register(t, t.cast.guest, { fetch_event_types: ['stream'] })).state.streams)).toEqual([general.id, open.id]);
    } finally {
      await t.ctx.db('channels').where({ id: open.id }).update({ is_default: false, is_web_public: false });
    }
  });

  it('names the same organization icon as GET /server_settings, one a client can load', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm'] });
    const settings = (await t.api.get('/server_settings', null)).body;
    expect(settings.realm_icon).toBe(state.realm_icon_url);
    expect(state.realm_icon_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon$/);
  });

  it('says which channels are recently active from their messages (feature level 323), in streams and subscriptions alike', async () => {
    const day = 24 * 3600;
    const now = Math.floor(Date.now() / 1000);
    // Fixture: #general and #open are a year old; #general's messages too, #open has one today.
    await t.ctx
      .db('channels')
      .whereIn('id', [general.id, open.id])
      .update({ date_created: now - 365 * day });
    await t.ctx
      .db('messages')
      .where({ recipient_id: general.recipient_id })
      .update({ date_sent: now - 200 * day });
    await sendToChannel(t, t.cast.owner, 'open', 'today', 'still here');
    const { state } = await register(t, t.cast.owner, { fetch_event_types: ['stream', 'subscription'] });
    const activity = (list: Array<{ stream_id: number; is_recently_active: boolean }>) =>
      Object.fromEntries(list.filter((c) => [general.id, open.id].includes(c.stream_id)).map((c) => [c.stream_id, c.is_recently_active]));
    expect(activity(state.streams)).toEqual({ [general.id]: false, [open.id]: true });
    expect(activity(state.subscriptions)).toEqual({ [general.id]: false, [open.id]: true });
  });

  it('sends the custom profile fields in display order, and the channel folders', async () => {
    const phone = await createProfileField(t, 'Phone', 1);
    const pronouns = await createProfileField(t, 'Pronouns', 8);
    await t.ctx.db('custom_profile_fields').where({ id: phone }).update({ order: 2, hint: 'Work phone', display_in_profile_summary: true });
    await t.ctx.db('custom_profile_fields').where({ id: pronouns }).update({ order: 1 });
    await t.ctx.db('channel_folders').insert({
      realm_id: t.realmId,
      name: 'Engineering',
      description: 'Build things',
      rendered_description: '<p>Build things</p>',
      order: 0,
      creator_id: t.cast.owner.id,
      date_created: 1_700_000_000,
      is_archived: false,
    });
    try {
      const { state } = await register(t, t.cast.member, { fetch_event_types: ['custom_profile_fields', 'channel_folders'] });
      expect(state.custom_profile_fields).toEqual([
        { id: pronouns, name: 'Pronouns', type: 8, hint: '', field_data: '', order: 1, required: false, editable_by_user: true },
        {
          id: phone,
          name: 'Phone',
          type: 1,
          hint: 'Work phone',
          field_data: '',
          order: 2,
          required: false,
          editable_by_user: true,
          display_in_profile_summary: true,
        },
      ]);
      expect(state.channel_folders).toEqual([
        {
          id: expect.any(Number),
          name: 'Engineering',
          order: 0,
          date_created: 1_700_000_000,
          creator_id: t.cast.owner.id,
          description: 'Build things',
          rendered_description: '<p>Build things</p>',
          is_archived: false,
        },
      ]);
    } finally {
      await t.ctx.db('channel_folders').where({ realm_id: t.realmId }).delete();
      await t.ctx.db('custom_profile_fields').whereIn('id', [phone, pronouns]).delete();
    }
  });

  it('lists the bots a user may administer: all for administrators, their own for others', async () => {
    const mine = await freshUser(t, { isBot: true, botOwnerId: t.cast.member.id });
    const bots = async (who: keyof TestServer['cast']) =>
      (await register(t, t.cast[who], { fetch_event_types: ['realm_bot'] })).state.realm_bots as Array<{ user_id: number }>;
    expect(await bots('member')).toEqual([
      {
        user_id: mine.id,
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
        services: [],
      },
    ]);
    expect((await bots('admin')).map((b) => b.user_id)).toEqual(expect.arrayContaining([t.cast.bot.id, mine.id]));
    expect(await bots('moderator')).toEqual([]);
  });

  it('sends presence in the modern form to clients declaring simplified_presence_events', async () => {
    await t.api.post('/users/me/presence', t.cast.owner, { status: 'active' });
    const { state } = await register(t, t.cast.member, {
      fetch_event_types: ['presence'],
      client_capabilities: { simplified_presence_events: true },
    });
    expect(state.presences[String(t.cast.owner.id)]).toEqual({ active_timestamp: expect.any(Number), idle_timestamp: expect.any(Number) });
    const legacy = (await register(t, t.cast.member, { fetch_event_types: ['presence'] })).state;
    expect(legacy.presences[t.cast.owner.email]).toHaveProperty('aggregated');
  });

  it('serves the emoji names where server_emoji_data_url points, revalidated by ETag', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm'] });
    const url = new URL(state.server_emoji_data_url);
    expect(url.pathname).toBe('/static/generated/emoji/emoji_api.json');
    const res = await request(t.app).get(url.pathname);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.code_to_names['1f44d']).toContain('thumbs_up');
    expect(res.body.code_to_names['1f389']).toContain('tada');
    const again = await request(t.app).get(url.pathname).set('If-None-Match', res.headers.etag!);
    expect(again.status).toBe(304);
  });
});
