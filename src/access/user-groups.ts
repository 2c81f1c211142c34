import type { Knex } from 'knex';
import type { Data, Params } from '../contract';
import { loadRealmGroups } from './realm-groups';
import { ApiError, noSuchUser } from '../errors';
import {
  getGroupRow,
  getGroupsByIds,
  getRecursiveMemberIds,
  isUserInGroup,
  listDirectMemberIds,
  listSubgroupIds,
  type UserGroupRow,
} from '../queries/groups';
import { isGuestRole } from '../domain/roles';
import { REALM_SETTING_RULES, USER_GROUP_SETTING_RULES, type GroupSettingRule, type UserGroupSetting } from '../domain/group-settings';
import { inGroup, type Caller, type Viewer } from './viewer';
import type { UserRow } from '../queries/rows';
import { getUserInRealm } from '../queries/users';

/**
 * GET /user_groups: the organization's system and named groups (anonymous
 * groups back group-setting values and are not listed), in the same form as
 * realm_user_groups of POST /register, which builds them.
 */
export async function getUserGroups(db: Knex, viewer: UserRow, p: Params<'get-user-groups'>): Promise<Data<'get-user-groups'>> {
  const groups = await loadRealmGroups(db, viewer.realm_id);
  return { user_groups: groups.userGroups(p.include_deactivated_groups ?? false) };
}

/**
 * GET /user_groups/{group}/members/{user}: membership through any depth of
 * subgroups unless direct_member_only. "Invalid user group" for unknown, anonymous
 * and other organizations' groups; "No such user" for users outside the
 * organization. Bots may ask and be asked about (feature levels 496, 458);
 * a deactivated user is never a member (feature level 303), not an error.
 */
export async function getIsUserGroupMember(
  db: Knex,
  viewer: UserRow,
  p: Params<'get-is-user-group-member'>,
): Promise<Data<'get-is-user-group-member'>> {
  const group = (await getGroupsByIds(db, viewer.realm_id, [p.user_group_id])).get(p.user_group_id);
  if (!group || group.name === null) throw new ApiError('Invalid user group');
  const target = await getUserInRealm(db, viewer.realm_id, p.user_id);
  if (!target) throw noSuchUser();
  return { is_user_group_member: await isUserInGroup(db, p.user_group_id, target.id, p.direct_member_only ?? false) };
}

/** A named or system group of the caller's organization, deactivated ones included; "Invalid user group" otherwise. */
async function accessUserGroupToRead(db: Knex, realmId: number, groupId: number): Promise<void> {
  const group = (await getGroupsByIds(db, realmId, [groupId])).get(groupId);
  if (!group || group.name === null) throw new ApiError('Invalid user group');
}

/** GET /user_groups/{group}/members: active members, recursively unless direct_member_only; by id. */
export async function getUserGroupMembers(
  db: Knex,
  viewer: UserRow,
  p: Params<'get-user-group-members'>,
): Promise<Data<'get-user-group-members'>> {
  await accessUserGroupToRead(db, viewer.realm_id, p.user_group_id);
  const members = p.direct_member_only
    ? await listDirectMemberIds(db, p.user_group_id, true)
    : (await getRecursiveMemberIds(db, p.user_group_id)).sort((a, b) => a - b);
  return { members };
}

/** GET /user_groups/{group}/subgroups: direct subgroups, or every group below at any depth; by id. */
export async function getUserGroupSubgroups(
  db: Knex,
  viewer: UserRow,
  p: Params<'get-user-group-subgroups'>,
): Promise<Data<'get-user-group-subgroups'>> {
  await accessUserGroupToRead(db, viewer.realm_id, p.user_group_id);
  return { subgroups: await listSubgroupIds(db, p.user_group_id, !(p.direct_subgroup_only ?? false)) };
}

/** Whether the caller holds a group setting: in its group, and not a guest unless the setting may hold role:everyone. */
export function holdsGroupSetting(v: Viewer, groupId: number | null, rule: GroupSettingRule): boolean {
  return inGroup(v, groupId) && (rule.allowEveryone || !isGuestRole(v.user.role));
}

/** The organization's can_manage_all_groups: every permission on every named group. */
export const canManageAllGroups = (c: Caller) =>
  holdsGroupSetting(c, c.realm.can_manage_all_groups, REALM_SETTING_RULES.can_manage_all_groups);

/**
 * A named group the caller may change under `setting` (Zulip's
 * access_user_group_for_update): "Invalid user group" for unknown and
 * anonymous groups, "User group is deactivated." unless allowed, and
 * "Insufficient permission" for system groups and callers holding neither
 * can_manage_all_groups, the group's can_manage_group, nor `setting`.
 */
export async function accessUserGroupForUpdate(
  q: Knex | Knex.Transaction,
  c: Caller,
  groupId: number,
  setting: UserGroupSetting,
  allowDeactivated: boolean,
): Promise<UserGroupRow & { name: string }> {
  const group = await getGroupRow(q, c.realm.id, groupId);
  if (!group || group.name === null) throw new ApiError('Invalid user group');
  if (!allowDeactivated && group.deactivated) throw new ApiError('User group is deactivated.');
  if (group.is_system_group) throw new ApiError('Insufficient permission');
  const named = group as UserGroupRow & { name: string };
  if (canManageAllGroups(c)) return named;
  if (holdsGroupSetting(c, group.can_manage_group, USER_GROUP_SETTING_RULES.can_manage_group)) return named;
  if (setting !== 'can_manage_group' && holdsGroupSetting(c, group[setting], USER_GROUP_SETTING_RULES[setting])) return named;
  throw new ApiError('Insufficient permission');
}
