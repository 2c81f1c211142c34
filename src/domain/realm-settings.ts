import type { GroupSettingValue } from './group-settings';
import type { RealmGroupSetting } from './group-settings';
import { ApiError } from '../errors';

/**
 * The organization settings PATCH /realm changes that are one column of the
 * realms table each (Zulip's Realm.property_types that Parley stores). The
 * channel-valued settings, the group settings and the time limits have
 * rules of their own (src/actions/realm-settings.ts).
 */
export const REALM_PROPERTIES = [
  'name',
  'description',
  'invite_required',
  'emails_restricted_to_domains',
  'disallow_disposable_email_addresses',
  'allow_message_editing',
  'message_content_edit_limit_seconds',
  'message_content_delete_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
  'message_edit_history_visibility_policy',
  'topics_policy',
  'waiting_period_threshold',
  'enable_spectator_access',
  'default_language',
  'message_retention_days',
  'enable_read_receipts',
] as const;
export type RealmProperty = (typeof REALM_PROPERTIES)[number];

/** The settings that name a channel; Zulip's audit rows name the field without `_id`. */
export const REALM_CHANNEL_SETTINGS = [
  'moderation_request_channel_id',
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
] as const;
export type RealmChannelSetting = (typeof REALM_CHANNEL_SETTINGS)[number];

/**
 * Settings only an owner may change (Zulip's update_realm raises
 * OrganizationOwnerRequiredError for these before changing anything).
 */
export const OWNER_ONLY_REALM_SETTINGS: ReadonlySet<string> = new Set<string>([
  'message_retention_days',
  'invite_required',
  'create_multiuse_invite_group',
  'can_create_groups',
  'can_invite_users_group',
  'can_manage_all_groups',
  'can_manage_billing_group',
  'emails_restricted_to_domains',
  'disallow_disposable_email_addresses',
  'waiting_period_threshold',
  'string_id',
] satisfies Array<RealmProperty | RealmGroupSetting | 'string_id'>);

/** The time-limit settings: a positive number of seconds, or "unlimited" (stored NULL). */
export const REALM_TIME_LIMITS = [
  'message_content_delete_limit_seconds',
  'message_content_edit_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
] as const;
export type RealmTimeLimit = (typeof REALM_TIME_LIMITS)[number];

/** Zulip's RequestVariableConversionError wording. */
const badValue = (name: string, value: unknown) => new ApiError(`Bad value for '${name}': ${String(value)}`);

/**
 * A time limit as sent (Zulip's parse_message_time_limit_setting): the
 * string "unlimited" is no limit (null); any other string, zero or a
 * negative number is refused.
 */
export function parseTimeLimit(name: string, value: number | string): number | null {
  if (value === 'unlimited') return null;
  if (typeof value === 'string' || value <= 0) throw badValue(name, value);
  return value;
}

/**
 * message_retention_days as sent (Zulip's parse_message_retention_days):
 * "unlimited" keeps messages for ever, stored as Zulip stores it, -1 (the
 * retention run reads NULL and -1 alike); "forever" and zero or less are
 * refused. Zulip allows a retention period only on paid plans; Parley has
 * no plans, so every organization may set one.
 */
export function parseRetentionDays(value: number | string): number {
  if (value === 'unlimited') return -1;
  if (typeof value === 'string' || value <= 0) throw badValue('message_retention_days', value);
  return value;
}

/**
 * Zulip's canonical form of a group-setting value
 * (parse_group_setting_value): an anonymous group of one subgroup and no
 * members is that subgroup, and an empty one is role:nobody.
 */
export function canonicalGroupSettingValue(value: GroupSettingValue, nobodyId: number): GroupSettingValue {
  if (typeof value === 'number') return value;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1) return value.direct_subgroups[0]!;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 0) return nobodyId;
  return value;
}

/** Zulip's are_both_group_setting_values_equal: ids equal, or the same members and subgroups in any order. */
export function sameGroupSettingValue(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const same = (x: number[], y: number[]) => {
    const sx = new Set(x);
    const sy = new Set(y);
    return sx.size === sy.size && [...sx].every((v) => sy.has(v));
  };
  return same(a.direct_members, b.direct_members) && same(a.direct_subgroups, b.direct_subgroups);
}
