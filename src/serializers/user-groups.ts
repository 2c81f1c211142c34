import type { Schema } from '../contract';
import type { EventBody } from '../events/bus';

/** user_group add: a new named group, in the form GET /user_groups lists it. */
export function toApiUserGroupAddEvent(group: Schema<'UserGroup'>): EventBody<Schema<'UserGroupAddEvent'>> {
  return { type: 'user_group', op: 'add', group };
}

/** user_group update: one change of a group's name, description, deactivation or one permission setting. */
export function toApiUserGroupUpdateEvent(groupId: number, data: Schema<'UserGroupUpdateData'>): EventBody<Schema<'UserGroupUpdateEvent'>> {
  return { type: 'user_group', op: 'update', group_id: groupId, data };
}

/** user_group add_subgroups / remove_subgroups: a group's direct subgroups changed. */
export function toApiUserGroupSubgroupsEvent(
  op: Schema<'UserGroupSubgroupsEvent'>['op'],
  groupId: number,
  subgroupIds: number[],
): EventBody<Schema<'UserGroupSubgroupsEvent'>> {
  return { type: 'user_group', op, group_id: groupId, direct_subgroup_ids: subgroupIds };
}
