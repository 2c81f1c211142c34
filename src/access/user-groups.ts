import type { Knex } from 'knex';
import type { Data, Params } from '../contract';
import { loadRealmGroups } from './realm-groups';
import { ApiError, noSuchUser } from '../errors';
import { getGroupsByIds, isUserInGroup } from '../queries/groups';
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
