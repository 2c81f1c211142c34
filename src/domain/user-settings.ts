import type { Schema } from '../contract';
import { isAdminRole, isGuestRole, isModeratorOrAbove } from './roles';

/**
 * The personal settings every user has: the contract's user_settings
 * object without the two lists POST /register adds (the choices offered),
 * every setting present (the contract leaves the per-user-only ones
 * optional, but a stored settings object always has them).
 */
export type UserSettings = Required<Omit<Schema<'UserSettings'>, 'available_notification_sounds' | 'emojiset_choices'>>;
export type UserSettingName = keyof UserSettings;

/**
 * Personal settings every user has, with Zulip's defaults. A new realm's
 * realm_user_defaults start from these; a new user copies the realm's
 * defaults at creation and never follows later changes to them.
 */
export const USER_SETTING_DEFAULTS: UserSettings = {
  // display
  starred_message_counts: true,
  receives_typing_notifications: true,
  web_suggest_update_timezone: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  web_font_size_px: 16,
  web_line_height_percent: 140,
  color_scheme: 1,
  enable_drafts_synchronization: true,
  translate_emoticons: false,
  display_emoji_reaction_users: true,
  default_language: 'en',
  web_home_view: 'inbox',
  web_escape_navigates_to_home_view: true,
  left_side_userlist: false,
  emojiset: 'google',
  demote_inactive_streams: 1,
  user_list_style: 2,
  web_animate_image_previews: 'on_hover',
  web_stream_unreads_count_display_policy: 2,
  hide_ai_features: false,
  web_inbox_show_channel_folders: true,
  web_left_sidebar_show_channel_folders: true,
  web_left_sidebar_unreads_count_summary: true,
  timezone: '',
  // notifications
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  notification_sound: 'zulip',
  enable_desktop_notifications: true,
  enable_sounds: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  email_notifications_batching_period_seconds: 120,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_digest_emails: true,
  enable_marketing_emails: true,
  enable_login_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  desktop_icon_count_display: 1,
  realm_name_in_email_notifications_policy: 1,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 2,
  automatically_follow_topics_where_mentioned: true,
  resolved_topic_notice_auto_read_policy: 'except_followed',
  presence_enabled: true,
  // behaviour and privacy
  enter_sends: false,
  twenty_four_hour_time: false,
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
  allow_private_data_export: false,
  email_address_visibility: 1,
  web_navigate_to_sent_message: true,
};

/** Whether a name is one of the personal settings. */
export const isUserSettingName = (name: string): name is UserSettingName => Object.hasOwn(USER_SETTING_DEFAULTS, name);

/** Email visibility codes (per user since Zulip 7). */
export const EmailVisibility = {
  EVERYONE: 1,
  MEMBERS: 2,
  ADMINS: 3,
  NOBODY: 4,
  MODERATORS: 5,
} as const;

/**
 * Whether a role may see the real addresses of users with this
 * email_address_visibility (Zulip's ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS):
 * everyone's always, members' unless a guest, moderators' from moderator up,
 * administrators' from administrator up, nobody's never.
 */
export function emailVisibleToRole(visibility: number, role: number): boolean {
  switch (visibility) {
    case EmailVisibility.EVERYONE:
      return true;
    case EmailVisibility.MEMBERS:
      return !isGuestRole(role);
    case EmailVisibility.MODERATORS:
      return isModeratorOrAbove(role);
    case EmailVisibility.ADMINS:
      return isAdminRole(role);
    default:
      return false;
  }
}

/**
 * A stored settings column, with any setting added since it was written
 * filled in. Remembered per stored text, frozen: every send reads its
 * sender's settings twice (the automatic topic policies), and the column is
 * a JSON text of about a hundred settings, whose parse was the send's
 * costliest function of its own (1.4 % of Parley's CPU in the send
 * benchmark). The text is the key, so a changed setting is a new entry; a
 * cached user row hands the same string over and over, whose hash V8 keeps.
 * Bounded: emptied when full, as an organization has far fewer distinct
 * settings texts than users.
 */
const settingsByText = new Map<string, Readonly<UserSettings>>();
const DEFAULT_SETTINGS: Readonly<UserSettings> = Object.freeze({ ...USER_SETTING_DEFAULTS });
export function parseSettings(raw: string | null | undefined): Readonly<UserSettings> {
  if (!raw) return DEFAULT_SETTINGS;
  let settings = settingsByText.get(raw);
  if (settings === undefined) {
    settings = Object.freeze({ ...USER_SETTING_DEFAULTS, ...(JSON.parse(raw) as Partial<UserSettings>) });
    if (settingsByText.size >= 2_000) settingsByText.clear();
    settingsByText.set(raw, settings);
  }
  return settings;
}

/** Read often: every message sender and user object checks email visibility. */
export function emailVisibilityOf(raw: string | null | undefined): number {
  return parseSettings(raw).email_address_visibility;
}

/** The notification sounds users may choose (Zulip's set); "none" turns sounds off. */
export const NOTIFICATION_SOUNDS: readonly string[] = ['chime', 'ding', 'done', 'ping', 'pop', 'ring', 'zulip'];

/**
 * Settings a user has that organizations set no default for: the personal
 * settings without them are realm_user_settings_defaults.
 */
export type PersonalOnlySetting = 'timezone' | 'allow_private_data_export' | 'enable_login_emails' | 'enable_marketing_emails';
export type RealmUserDefaults = Omit<UserSettings, PersonalOnlySetting>;
export type RealmDefaultName = keyof RealmUserDefaults;

const PERSONAL_ONLY: ReadonlySet<string> = new Set<PersonalOnlySetting>([
  'timezone',
  'allow_private_data_export',
  'enable_login_emails',
  'enable_marketing_emails',
]);

/** Whether a name is a setting organizations set a default for. */
export const isRealmDefaultName = (name: string): name is RealmDefaultName => isUserSettingName(name) && !PERSONAL_ONLY.has(name);

/** The organization defaults among a user's settings (realm_user_defaults stores a whole settings object). */
export function realmDefaultsOf(settings: UserSettings): RealmUserDefaults {
  const {
    timezone: _timezone,
    allow_private_data_export: _export,
    enable_login_emails: _login,
    enable_marketing_emails: _marketing,
    ...defaults
  } = settings;
  return defaults;
}
