import type { GroupSettingValue } from '../domain/group-settings';

/** A setting's group as the API shows it: the id of a named group, or an anonymous group's contents. */
export function toApiGroupSetting(
  groupId: number,
  anonymous: Map<number, { direct_members: number[]; direct_subgroups: number[] }>,
): GroupSettingValue {
  return anonymous.get(groupId) ?? groupId;
}
