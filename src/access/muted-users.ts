import type { Knex } from 'knex';
import { ApiError, noSuchUser } from '../errors';
import type { UserRow } from '../queries/rows';
import { getUserInRealm } from '../queries/users';
import { findInaccessibleUsers } from './user-access';
import { type Caller, inGroup } from './viewer';

/**
 * The user to mute or unmute (Zulip's access_user_by_id_including_cross_realm
 * with bots and deactivated users allowed, not for an administrator):
 * "No such user" for unknown IDs and other organizations' users; a guest
 * whom can_access_all_users_group limits gets "Insufficient permission" for
 * a user they may not know.
 */
export async function accessUserToMute(q: Knex | Knex.Transaction, caller: Caller, userId: number): Promise<UserRow> {
  const target = await getUserInRealm(q, caller.user.realm_id, userId);
  if (!target) throw noSuchUser();
  const mayAccessAll = inGroup(caller, caller.realm.can_access_all_users_group);
  if ((await findInaccessibleUsers(q, caller, [target], mayAccessAll)).size > 0) throw new ApiError('Insufficient permission');
  return target;
}
