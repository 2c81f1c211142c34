import { CHANNEL_SETTING_RULES, GroupSettingRule, REALM_SETTING_RULES, USER_GROUP_SETTING_RULES } from '../domain/group-settings';

/**
 * One setting as Zulip's GroupPermissionSetting serializes it. The
 * "creator" default is named after what was created: Zulip calls it
 * channel_creator for channels and group_creator for user groups.
 */
function toApiPermissionSetting(rule: GroupSettingRule, creatorName: string) {
  return {
    require_system_group: rule.requireSystemGroup ?? false,
    allow_internet_group: rule.allowInternet,
    allow_nobody_group: rule.allowNobody,
    allow_everyone_group: rule.allowEveryone,
    default_group_name: rule.default === 'creator' ? creatorName : rule.default,
    default_for_system_groups: rule.defaultForSystemGroups ?? null,
    allowed_system_groups: [...(rule.allowedSystemGroups ?? [])],
  };
}

const bySetting = (rules: Record<string, GroupSettingRule>, creatorName: string) =>
  Object.fromEntries(Object.entries(rules).map(([name, rule]) => [name, toApiPermissionSetting(rule, creatorName)]));

/**
 * server_supported_permission_settings of POST /register: the rules of
 * every group-based setting Parley has, by family (realm, stream, group).
 * It never changes while the server runs, so it is built once.
 */
export const SERVER_SUPPORTED_PERMISSION_SETTINGS = {
  realm: bySetting(REALM_SETTING_RULES, 'realm_creator'),
  stream: bySetting(CHANNEL_SETTING_RULES, 'channel_creator'),
  group: bySetting(USER_GROUP_SETTING_RULES, 'group_creator'),
};
