import type { RealmGroupSetting } from '../domain/group-settings';
import type { RoleCode } from '../domain/roles';
import type { BotTypeCode } from '../domain/users';

/** The realm's permission settings: each column holds a user group id (NULL only before the realm's system groups exist). */
export type RealmGroupColumns = { [K in RealmGroupSetting]: number };

/** Row shapes of the tables, as the queries return them (booleans already converted). */
export interface RealmRow extends RealmGroupColumns {
  id: number;
  string_id: string;
  name: string;
  description: string;
  date_created: number;
  deactivated: boolean;
  invite_required: boolean;
  emails_restricted_to_domains: boolean;
  disallow_disposable_email_addresses: boolean;
  password_auth_enabled: boolean;
  allow_message_editing: boolean;
  message_content_edit_limit_seconds: number | null;
  message_content_delete_limit_seconds: number | null;
  move_messages_within_stream_limit_seconds: number | null;
  move_messages_between_streams_limit_seconds: number | null;
  message_edit_history_visibility_policy: 'all' | 'moves' | 'none';
  /** The organization's default for channels whose own policy is `inherit`. */
  topics_policy: 'allow_empty_topic' | 'disable_empty_topic';
  moderation_request_channel_id: number | null;
  new_stream_announcements_stream_id: number | null;
  signup_announcements_stream_id: number | null;
  waiting_period_threshold: number;
  enable_spectator_access: boolean;
  default_language: string;
  message_retention_days: number | null;
  /** The organization's upload quota in MiB, null for none (migration 029). */
  upload_quota_mib: number | null;
  /** The organization icon's source, 'G' (default) or 'U' (uploaded), and version (migration 032). */
  icon_source: string;
  icon_version: number;
  /** The wide logo's and the dark-theme logo's sources, 'D' (default) or 'U', and versions (migration 032). */
  logo_source: string;
  logo_version: number;
  night_logo_source: string;
  night_logo_version: number;
  max_invites: number | null;
  /** The organization shares no presence (migration 015). */
  presence_disabled: boolean;
  /** Whether read receipts answer in the organization (migration 016). */
  enable_read_receipts: boolean;
  /** How many alert words the organization's users have (migration 020). */
  alert_word_count: number;
}

export interface UserRow {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  email_key: string;
  full_name: string;
  role: RoleCode;
  is_bot: boolean;
  bot_type: BotTypeCode | null;
  bot_owner_id: number | null;
  is_active: boolean;
  is_imported_stub: boolean;
  is_mirror_dummy: boolean;
  api_key: string;
  password_hash: string | null;
  can_create_users: boolean;
  can_change_user_emails: boolean;
  timezone: string;
  avatar_source: string;
  avatar_version: number;
  /** The uploaded avatar's file name stem (avatar_source 'U'), null for Gravatar. */
  avatar_hash: string | null;
  date_joined: number;
  /** Made through POST /users and not logged in yet: the first login moves date_joined (migration 028). */
  awaiting_first_login: boolean;
  last_active_time: number | null;
  long_term_idle: boolean;
  recipient_id: number | null;
  settings: string;
  /** A bot's defaults (migration 040): the channel its messages go to when a request names none, the channel its queues follow, and whether they follow every public channel. */
  default_sending_channel_id: number | null;
  default_events_register_channel_id: number | null;
  default_all_public_streams: boolean;
}

const BOOL_COLUMNS = new Set([
  'deactivated',
  'is_animated',
  'invite_required',
  'emails_restricted_to_domains',
  'disallow_disposable_email_addresses',
  'password_auth_enabled',
  'allow_message_editing',
  'enable_spectator_access',
  'presence_disabled',
  'enable_read_receipts',
  'is_bot',
  'is_active',
  'default_all_public_streams',
  'is_imported_stub',
  'is_mirror_dummy',
  'awaiting_first_login',
  'can_create_users',
  'can_change_user_emails',
  'long_term_idle',
  'invite_only',
  'is_web_public',
  'history_public_to_subscribers',
  'is_default',
  'is_recently_active',
  'active',
  'is_user_active',
  'is_user_long_term_idle',
  'idle_keeps_rows',
  'is_muted',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
  'is_me_message',
  'has_attachment',
  'has_image',
  'has_edit_history',
  'has_submessages',
  'has_link',
  'is_system_group',
  'is_archived',
  'is_realm_public',
  'revoked',
  'include_realm_default_subscriptions',
  'notify_referrer_on_join',
  'display_in_profile_summary',
  'required',
  'editable_by_user',
  'use_for_user_matching',
]);

/** Both drivers return booleans as 0/1; the row mappers turn them into booleans (NULL stays NULL). */
/** The rows of `knex.raw`: mysql2 answers [rows, fields], better-sqlite3 the rows alone. */
export function rawRows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

export function mapBools<T>(row: object): T {
  // Any table's row, converted in place: the one shape here is "columns by name".
  const r = row as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    const v = r[key];
    if (BOOL_COLUMNS.has(key) && v !== null && v !== undefined) r[key] = Boolean(v);
  }
  return row as T;
}
