import type { Schema } from '../contract';
import type { SystemGroupName } from './roles';

/** A group-setting value on the wire: a group id, or an anonymous group given by its direct members and subgroups. */
export type GroupSettingValue = Schema<'GroupSettingValue'>;

/**
 * How a group-based permission setting may be configured (Zulip's
 * GroupPermissionSetting): which system groups it may take, its default
 * and, for user groups, the default a system group gets. New realms,
 * channels and system groups take their defaults from here, POST
 * /register advertises them (server_supported_permission_settings), and
 * channel values are checked against them when stored
 * (src/actions/group-settings.ts). Realm and user-group values cannot be
 * changed through the API yet, so requireSystemGroup and
 * allowedSystemGroups are only advertised.
 */
export interface GroupSettingRule {
  allowNobody: boolean;
  /** role:everyone includes guests. */
  allowEveryone: boolean;
  /** role:internet (spectators) is never allowed for the settings Parley has. */
  allowInternet: boolean;
  /** The default: a system group, or the creator (of the channel or group) as an anonymous group. */
  default: SystemGroupName | 'creator';
  /** Only a single system group, and then only one of allowedSystemGroups when given. */
  requireSystemGroup?: boolean;
  allowedSystemGroups?: readonly SystemGroupName[];
  /** The value a system group gets (user-group settings only). */
  defaultForSystemGroups?: SystemGroupName;
}

export const CHANNEL_SETTING_RULES = {
  can_add_subscribers_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:nobody' },
  can_administer_channel_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'creator' },
  can_create_topic_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
  can_delete_any_message_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:nobody' },
  can_delete_own_message_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:nobody' },
  can_move_messages_out_of_channel_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:nobody' },
  can_move_messages_within_channel_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:nobody' },
  can_remove_subscribers_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:administrators' },
  can_resolve_topics_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:nobody' },
  can_send_message_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
  can_subscribe_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:nobody' },
} as const satisfies Record<string, GroupSettingRule>;

export type ChannelGroupSetting = keyof typeof CHANNEL_SETTING_RULES;
export const CHANNEL_GROUP_SETTINGS = Object.keys(CHANNEL_SETTING_RULES) as ChannelGroupSetting[];

/** Realm-level settings, Zulip's Realm.REALM_PERMISSION_GROUP_SETTINGS (the realm's defaults come from here). */
export const REALM_SETTING_RULES = {
  can_access_all_users_group: {
    allowNobody: false,
    allowEveryone: true,
    allowInternet: false,
    default: 'role:everyone',
    // Zulip's web app assumes members can always see everyone, so only these two values are possible.
    requireSystemGroup: true,
    allowedSystemGroups: ['role:everyone', 'role:members'],
  },
  can_add_custom_emoji_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_add_subscribers_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_create_bots_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_create_groups: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_create_public_channel_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_create_private_channel_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_create_web_public_channel_group: {
    allowNobody: true,
    allowEveryone: false,
    allowInternet: false,
    default: 'role:owners',
    requireSystemGroup: true,
    allowedSystemGroups: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
  },
  can_create_write_only_bots_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_delete_any_message_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:administrators' },
  can_delete_own_message_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
  can_invite_users_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_manage_all_groups: { allowNobody: false, allowEveryone: false, allowInternet: false, default: 'role:owners' },
  can_manage_billing_group: { allowNobody: false, allowEveryone: false, allowInternet: false, default: 'role:administrators' },
  can_mention_many_users_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:administrators' },
  can_move_messages_between_channels_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:members' },
  can_move_messages_between_topics_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
  can_resolve_topics_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
  can_set_delete_message_policy_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:moderators' },
  can_set_topics_policy_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:members' },
  can_summarize_topics_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
  create_multiuse_invite_group: { allowNobody: true, allowEveryone: false, allowInternet: false, default: 'role:administrators' },
  direct_message_initiator_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
  direct_message_permission_group: { allowNobody: true, allowEveryone: true, allowInternet: false, default: 'role:everyone' },
} as const satisfies Record<string, GroupSettingRule>;

/**
 * User-group settings, Zulip's NamedUserGroup.GROUP_PERMISSION_SETTINGS:
 * a system group gets role:nobody for each (nobody manages or joins
 * role:members by hand).
 */
export const USER_GROUP_SETTING_RULES = {
  can_add_members_group: {
    allowNobody: true,
    allowEveryone: false,
    allowInternet: false,
    default: 'creator',
    defaultForSystemGroups: 'role:nobody',
  },
  can_join_group: {
    allowNobody: true,
    allowEveryone: false,
    allowInternet: false,
    default: 'role:nobody',
    defaultForSystemGroups: 'role:nobody',
  },
  can_leave_group: {
    allowNobody: true,
    allowEveryone: true,
    allowInternet: false,
    default: 'role:everyone',
    defaultForSystemGroups: 'role:nobody',
  },
  can_manage_group: {
    allowNobody: true,
    allowEveryone: false,
    allowInternet: false,
    default: 'creator',
    defaultForSystemGroups: 'role:nobody',
  },
  can_mention_group: {
    allowNobody: true,
    allowEveryone: true,
    allowInternet: false,
    default: 'role:everyone',
    defaultForSystemGroups: 'role:nobody',
  },
  can_remove_members_group: {
    allowNobody: true,
    allowEveryone: false,
    allowInternet: false,
    default: 'role:nobody',
    defaultForSystemGroups: 'role:nobody',
  },
} as const satisfies Record<string, GroupSettingRule>;

export type RealmGroupSetting = keyof typeof REALM_SETTING_RULES;
/** The realm's permission-group columns (realms.<setting> holds a group id). */
export const REALM_GROUP_SETTINGS = Object.keys(REALM_SETTING_RULES) as RealmGroupSetting[];
export type UserGroupSetting = keyof typeof USER_GROUP_SETTING_RULES;
/** A user group's permission-group columns. */
export const GROUP_GROUP_SETTINGS = Object.keys(USER_GROUP_SETTING_RULES) as UserGroupSetting[];

/** {direct_members: [], direct_subgroups: [G]} is G: Zulip's canonical form of a value. */
function canonicalGroupSettingValue(v: GroupSettingValue): GroupSettingValue {
  if (typeof v !== 'number' && v.direct_members.length === 0 && v.direct_subgroups.length === 1) return v.direct_subgroups[0]!;
  return v;
}

/**
 * Whether two group-setting values name the same holders (Zulip's
 * are_both_group_setting_values_equal): the same group id, or the same sets
 * of direct members and subgroups, a lone subgroup being equal to its id.
 */
export function groupSettingValuesEqual(a: GroupSettingValue, b: GroupSettingValue): boolean {
  const x = canonicalGroupSettingValue(a);
  const y = canonicalGroupSettingValue(b);
  if (typeof x === 'number' || typeof y === 'number') return x === y;
  const same = (p: number[], q: number[]) => {
    const s = new Set(p);
    return s.size === new Set(q).size && q.every((i) => s.has(i));
  };
  return same(x.direct_members, y.direct_members) && same(x.direct_subgroups, y.direct_subgroups);
}
