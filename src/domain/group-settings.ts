import type { SystemGroupName } from './roles';

/** A group-setting value on the wire: a group id, or an anonymous group given by its direct members and subgroups. */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/**
 * Which system groups a setting may take (Zulip's GroupPermissionSetting):
 * role:internet never for these; role:everyone (which includes guests) and
 * role:nobody only where allowed.
 */
export interface GroupSettingRule {
  allowNobody: boolean;
  allowEveryone: boolean;
  allowInternet: boolean;
  /** The default: a system group, or the creator as an anonymous group. */
  default: SystemGroupName | 'creator';
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
