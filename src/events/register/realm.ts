import { createHash } from 'node:crypto';
import type { Schema } from '../../contract';
import type { RealmGroups } from '../../access/realm-groups';
import { MAX_AVATAR_FILE_SIZE_MIB } from '../../domain/avatars';
import type { RealmGroupSetting } from '../../domain/group-settings';
import { MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_NAME_LENGTH, MAX_PRINCIPALS } from '../../domain/channels';
import { EMOJI_DATA_PATH } from '../../domain/emoji';
import { DEFAULT_EXTERNAL_ACCOUNTS } from '../../domain/profile-fields';
import { realmHost, realmUrl } from '../../domain/realm-address';
import { EMPTY_TOPIC_DISPLAY_NAME, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from '../../domain/topics';
import { REPORT_MESSAGE_TYPES } from '../../domain/reports';
import { MIN_PASSWORD_LENGTH } from '../../domain/secrets';
import type { RealmRow } from '../../queries/rows';
import { SERVER_SUPPORTED_PERMISSION_SETTINGS } from '../../serializers/permission-settings';
import { MAX_ICON_FILE_SIZE_MIB, MAX_LOGO_FILE_SIZE_MIB } from '../../domain/realm-images';
import { realmIconUrl, realmLogoUrl } from '../../serializers/realm-images';
import type { StatePart } from './types';

/** Zulip's ChannelFolder limits. */
const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;

/**
 * The typing and presence protocol constants Zulip's settings default to;
 * clients time their start/stop notifications and presence pings by them.
 */
const SERVER_TIMINGS: StatePart<
  | 'server_typing_started_expiry_period_milliseconds'
  | 'server_typing_stopped_wait_period_milliseconds'
  | 'server_typing_started_wait_period_milliseconds'
  | 'server_presence_ping_interval_seconds'
  | 'server_presence_offline_threshold_seconds'
> = {
  server_typing_started_expiry_period_milliseconds: 15_000,
  server_typing_stopped_wait_period_milliseconds: 5_000,
  server_typing_started_wait_period_milliseconds: 10_000,
  server_presence_ping_interval_seconds: 60,
  server_presence_offline_threshold_seconds: 140,
};

export interface RealmStateConfig {
  /** The server's EXTERNAL_URL: the organization's own URL and host are made from it (src/domain/realm-address.ts). */
  externalUrl: string;
  maxFileUploadSizeMib: number;
  heartbeatMs: number;
  /** The server's WEB_PUBLIC_STREAMS_ENABLED. */
  webPublicStreamsEnabled: boolean;
  /** Whether a push notification relay is configured (PUSH_RELAY_URL). */
  pushNotificationsEnabled: boolean;
}

/** When this process started, UNIX seconds: Zulip's server_generation, for clients' error reports. */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/** The realm's permission settings as the initial state names them: realm_<setting>. */
type RealmGroupKey = `realm_${RealmGroupSetting}`;

type RealmKey =
  | 'max_topic_length'
  | 'max_message_length'
  | 'max_stream_name_length'
  | 'max_stream_description_length'
  | 'max_channel_folder_name_length'
  | 'max_channel_folder_description_length'
  | 'max_file_upload_size_mib'
  | 'realm_empty_topic_display_name'
  | 'server_report_message_types'
  | 'server_supported_permission_settings'
  | keyof typeof SERVER_TIMINGS
  | 'event_queue_longpoll_timeout_seconds'
  | 'realm_name'
  | 'realm_description'
  | 'realm_url'
  | 'realm_uri'
  | 'realm_default_language'
  | 'realm_waiting_period_threshold'
  | 'realm_enable_spectator_access'
  | 'realm_presence_disabled'
  | 'realm_enable_read_receipts'
  | 'realm_allow_message_editing'
  | 'realm_message_content_edit_limit_seconds'
  | 'realm_move_messages_within_stream_limit_seconds'
  | 'realm_move_messages_between_streams_limit_seconds'
  | 'realm_message_content_delete_limit_seconds'
  | 'realm_message_edit_history_visibility_policy'
  | 'realm_allow_edit_history'
  | 'realm_topics_policy'
  | 'realm_mandatory_topics'
  | 'realm_moderation_request_channel_id'
  | RealmGroupKey
  | keyof ReturnType<typeof organizationSettings>
  | keyof ReturnType<typeof serverSettings>
  | keyof ReturnType<typeof legacyPolicies>
  | 'realm_workplace_users_group'
  | 'realm_uuid'
  | 'realm_icon_url'
  | 'realm_logo_url'
  | 'realm_night_logo_url'
  | 'realm_bot_domain'
  | 'realm_push_notifications_enabled'
  | 'realm_authentication_methods'
  | 'realm_email_auth_enabled'
  | 'realm_password_auth_enabled'
  | 'server_web_public_streams_enabled'
  | 'server_emoji_data_url';

/** The `realm` part of the initial state: limits, server constants and the organization's settings. */
export function realmState(realm: RealmRow, realmGroups: RealmGroups, cfg: RealmStateConfig): StatePart<RealmKey> {
  const groups = realmGroups.lookup;
  const url = realmUrl(cfg.externalUrl, realm.string_id);
  return {
    ...serverSettings(),
    ...organizationSettings(realm),
    ...legacyPolicies(realm, realmGroups),
    // Zulip's default: everyone counts as a workplace user (Parley has no billing to use it for).
    realm_workplace_users_group: groups.value(realmGroups.systemGroupId('role:everyone') ?? null),
    realm_uuid: realmUuid(realm),
    // Uploaded images or the defaults (src/serializers/realm-images.ts).
    realm_icon_url: realmIconUrl(realm),
    realm_logo_url: realmLogoUrl(realm, false),
    realm_night_logo_url: realmLogoUrl(realm, true),
    realm_bot_domain: realmHost(cfg.externalUrl, realm.string_id),
    realm_push_notifications_enabled: cfg.pushNotificationsEnabled,
    // Parley's one way to log in is email and password (GET /server_settings says the same).
    realm_authentication_methods: { Email: { enabled: realm.password_auth_enabled, available: true } },
    realm_email_auth_enabled: realm.password_auth_enabled,
    realm_password_auth_enabled: realm.password_auth_enabled,
    server_web_public_streams_enabled: cfg.webPublicStreamsEnabled,
    server_emoji_data_url: `${url}${EMOJI_DATA_PATH}`,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: MAX_CHANNEL_FOLDER_NAME_LENGTH,
    max_channel_folder_description_length: MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
    max_file_upload_size_mib: cfg.maxFileUploadSizeMib,
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    server_report_message_types: REPORT_MESSAGE_TYPES,
    server_supported_permission_settings: SERVER_SUPPORTED_PERMISSION_SETTINGS,
    ...SERVER_TIMINGS,
    // Zulip's EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS (90) is its heartbeat (at most 55 s) plus a margin.
    event_queue_longpoll_timeout_seconds: Math.ceil(cfg.heartbeatMs / 1000) + 40,
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: url,
    realm_uri: url,
    realm_default_language: realm.default_language,
    realm_waiting_period_threshold: realm.waiting_period_threshold,
    realm_enable_spectator_access: realm.enable_spectator_access,
    realm_presence_disabled: realm.presence_disabled,
    realm_enable_read_receipts: realm.enable_read_receipts,
    realm_allow_message_editing: realm.allow_message_editing,
    realm_message_content_edit_limit_seconds: realm.message_content_edit_limit_seconds,
    realm_move_messages_within_stream_limit_seconds: realm.move_messages_within_stream_limit_seconds,
    realm_move_messages_between_streams_limit_seconds: realm.move_messages_between_streams_limit_seconds,
    realm_message_content_delete_limit_seconds: realm.message_content_delete_limit_seconds,
    realm_message_edit_history_visibility_policy: realm.message_edit_history_visibility_policy,
    realm_allow_edit_history: realm.message_edit_history_visibility_policy !== 'none',
    realm_topics_policy: realm.topics_policy,
    realm_mandatory_topics: realm.topics_policy === 'disable_empty_topic',
    // Zulip sends -1, not null, for "no channel".
    realm_moderation_request_channel_id: realm.moderation_request_channel_id ?? -1,
    realm_can_access_all_users_group: groups.value(realm.can_access_all_users_group),
    realm_can_add_custom_emoji_group: groups.value(realm.can_add_custom_emoji_group),
    realm_can_add_subscribers_group: groups.value(realm.can_add_subscribers_group),
    realm_can_create_bots_group: groups.value(realm.can_create_bots_group),
    realm_can_create_groups: groups.value(realm.can_create_groups),
    realm_can_create_public_channel_group: groups.value(realm.can_create_public_channel_group),
    realm_can_create_private_channel_group: groups.value(realm.can_create_private_channel_group),
    realm_can_create_web_public_channel_group: groups.value(realm.can_create_web_public_channel_group),
    realm_can_create_write_only_bots_group: groups.value(realm.can_create_write_only_bots_group),
    realm_can_delete_any_message_group: groups.value(realm.can_delete_any_message_group),
    realm_can_delete_own_message_group: groups.value(realm.can_delete_own_message_group),
    realm_can_invite_users_group: groups.value(realm.can_invite_users_group),
    realm_can_manage_all_groups: groups.value(realm.can_manage_all_groups),
    realm_can_manage_billing_group: groups.value(realm.can_manage_billing_group),
    realm_can_mention_many_users_group: groups.value(realm.can_mention_many_users_group),
    realm_can_move_messages_between_channels_group: groups.value(realm.can_move_messages_between_channels_group),
    realm_can_move_messages_between_topics_group: groups.value(realm.can_move_messages_between_topics_group),
    realm_can_resolve_topics_group: groups.value(realm.can_resolve_topics_group),
    realm_can_set_delete_message_policy_group: groups.value(realm.can_set_delete_message_policy_group),
    realm_can_set_topics_policy_group: groups.value(realm.can_set_topics_policy_group),
    realm_can_summarize_topics_group: groups.value(realm.can_summarize_topics_group),
    realm_create_multiuse_invite_group: groups.value(realm.create_multiuse_invite_group),
    realm_direct_message_initiator_group: groups.value(realm.direct_message_initiator_group),
    realm_direct_message_permission_group: groups.value(realm.direct_message_permission_group),
  };
}

/**
 * Organization settings Parley stores, and Zulip's values for the ones it
 * has no setting for, chosen to describe what Parley does: it sends no
 * email (no digests or welcome emails), offers no video calls, GIF picker,
 * custom Jitsi server or billing, and renders image previews but no web
 * page previews.
 */
function organizationSettings(realm: RealmRow) {
  return {
    realm_date_created: realm.date_created,
    realm_invite_required: realm.invite_required,
    realm_emails_restricted_to_domains: realm.emails_restricted_to_domains,
    realm_disallow_disposable_email_addresses: realm.disallow_disposable_email_addresses,
    // Stored as NULL for "for ever"; Zulip has sent -1 for that since feature level 22.
    realm_message_retention_days: realm.message_retention_days ?? -1,
    // -1, not null, for "no channel", as realm_moderation_request_channel_id.
    realm_new_stream_announcements_stream_id: realm.new_stream_announcements_stream_id ?? -1,
    realm_signup_announcements_stream_id: realm.signup_announcements_stream_id ?? -1,
    realm_zulip_update_announcements_stream_id: -1,
    realm_avatar_changes_disabled: false,
    realm_name_changes_disabled: false,
    realm_email_changes_disabled: false,
    realm_require_unique_names: false,
    realm_default_code_block_language: '',
    realm_digest_emails_enabled: false,
    realm_digest_weekday: 1,
    realm_send_welcome_emails: false,
    realm_message_content_allowed_in_email_notifications: true,
    realm_welcome_message_custom_text: '',
    realm_send_channel_events_messages: false,
    realm_enable_guest_user_indicator: true,
    realm_enable_guest_user_dm_warning: true,
    realm_inline_image_preview: true,
    realm_inline_url_embed_preview: false,
    realm_media_preview_size: 100 as const,
    realm_default_avatar_source: 'G' as const,
    realm_video_chat_provider: VIDEO_CHAT_NONE,
    realm_jitsi_server_url: null,
    // Zulip's default rating ("g"); Parley has no GIF picker for it to limit.
    realm_gif_rating_policy: 2,
    realm_want_advertise_in_communities_directory: false,
    realm_owner_full_content_access: false,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_require_e2ee_push_notifications: false,
    realm_upload_quota_mib: realm.upload_quota_mib,
    realm_icon_source: realm.icon_source as 'G' | 'U',
    realm_logo_source: realm.logo_source as 'D' | 'U',
    realm_night_logo_source: realm.night_logo_source as 'D' | 'U',
    realm_org_type: 0,
    // Self-hosted, never Zulip Cloud's limited plan.
    realm_plan_type: 1,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: '',
  };
}

/** Zulip's "None" video call provider: the only one Parley offers. */
const VIDEO_CHAT_NONE = 0;

/** The rating choices of realm_gif_rating_policy, by Zulip's keys and ids. */
const GIF_RATING_POLICY_OPTIONS: Record<string, Schema<'NamedOption'>> = {
  disabled: { name: 'GIFs disabled', id: 0 },
  y: { name: 'Rated Y: very young audience', id: 1 },
  g: { name: 'Rated G: general audience', id: 2 },
  pg: { name: 'Rated PG: parental guidance', id: 3 },
  'pg-13': { name: 'Rated PG-13: parental guidance under 13', id: 4 },
  r: { name: 'Rated R: restricted', id: 5 },
};

/** Server-wide constants and limits, as a Zulip server with Parley's features configured sends them. */
function serverSettings() {
  const externalAccounts: Record<string, Schema<'ExternalAccountType'>> = {};
  for (const [key, a] of Object.entries(DEFAULT_EXTERNAL_ACCOUNTS)) externalAccounts[key] = { ...a };
  const gifRatings: Record<string, Schema<'NamedOption'>> = {};
  for (const [key, o] of Object.entries(GIF_RATING_POLICY_OPTIONS)) gifRatings[key] = { ...o };
  return {
    realm_available_video_chat_providers: { disabled: { name: 'None', id: VIDEO_CHAT_NONE } } as Record<string, Schema<'NamedOption'>>,
    gif_rating_policy_options: gifRatings,
    realm_default_external_accounts: externalAccounts,
    server_jitsi_server_url: null,
    jitsi_server_url: null,
    max_avatar_file_size_mib: MAX_AVATAR_FILE_SIZE_MIB,
    // Zulip's defaults, the limits POST /realm/icon and /realm/logo apply.
    max_icon_file_size_mib: MAX_ICON_FILE_SIZE_MIB,
    max_logo_file_size_mib: MAX_LOGO_FILE_SIZE_MIB,
    // POST /users/me/subscriptions tells every user it subscribes, up to the most one request may name.
    max_bulk_new_subscription_messages: MAX_PRINCIPALS,
    max_reminder_note_length: 1000,
    password_min_length: MIN_PASSWORD_LENGTH,
    // Zulip's default; a hint for password forms (Parley refuses no password for its length).
    password_max_length: 100,
    // Parley checks a password's length only, not how guessable it is.
    password_min_guesses: 0,
    settings_send_digest_emails: false,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_thumbnail_formats: [],
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    server_can_summarize_topics: false,
    server_generation: SERVER_GENERATION,
    development_environment: false,
    // Zulip's defaults; Parley never deletes a deactivated organization's data.
    server_min_deactivated_realm_deletion_days: 14,
    server_max_deactivated_realm_deletion_days: null,
  };
}

/** Zulip's CommonPolicyEnum values of the system groups that had one. */
const COMMON_POLICY: Readonly<Record<string, 1 | 2 | 3 | 4>> = {
  'role:members': 1,
  'role:administrators': 2,
  'role:fullmembers': 3,
  'role:moderators': 4,
};
const WEB_PUBLIC_POLICY: Readonly<Record<string, 2 | 4 | 6 | 7>> = {
  'role:administrators': 2,
  'role:moderators': 4,
  'role:nobody': 6,
  'role:owners': 7,
};
const WILDCARD_MENTION_POLICY: Readonly<Record<string, 1 | 2 | 3 | 5 | 6 | 7>> = {
  'role:everyone': 1,
  'role:members': 2,
  'role:fullmembers': 3,
  'role:administrators': 5,
  'role:nobody': 6,
  'role:moderators': 7,
};

/**
 * The integer policies the group settings replaced, still sent for old
 * clients (zulip-flutter requires realm_wildcard_mention_policy). A setting
 * naming one of the roles the old enum had maps to it; any other group to
 * the value Zulip gives then (get_corresponding_policy_value_for_group_setting):
 * members for channel creation, moderators for web-public channels, everyone
 * for wildcard mentions.
 */
function legacyPolicies(realm: RealmRow, groups: RealmGroups) {
  const role = (groupId: number | null) => groups.lookup.systemName(groupId) ?? '';
  return {
    realm_create_public_stream_policy: COMMON_POLICY[role(realm.can_create_public_channel_group)] ?? 1,
    realm_create_private_stream_policy: COMMON_POLICY[role(realm.can_create_private_channel_group)] ?? 1,
    realm_create_web_public_stream_policy: WEB_PUBLIC_POLICY[role(realm.can_create_web_public_channel_group)] ?? 4,
    realm_wildcard_mention_policy: WILDCARD_MENTION_POLICY[role(realm.can_mention_many_users_group)] ?? 1,
  };
}

/**
 * realm_uuid (feature level 466). Zulip stores a random one; Parley has no
 * column for it and derives a name-based (version 5 layout) UUID from the
 * organization's id, subdomain and creation time, which a backup restored
 * on another server keeps.
 */
function realmUuid(realm: RealmRow): string {
  const h = createHash('sha1').update(`parley-realm:${realm.id}:${realm.string_id}:${realm.date_created}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
