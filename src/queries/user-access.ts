import type { Knex } from 'knex';
import { getRecursiveMemberIds } from './groups';
import { getRealmById } from './realms';
import { listUserIdsSharingRecipients } from './register';
import { listActiveUserIds } from './users';

type Q = Knex | Knex.Transaction;

/**
 * Who may know about a user (Zulip's can_access_all_users_group): members
 * of that group see everyone; others only the people they share a channel
 * or a conversation with. Bots are known to all. The audience of that
 * user's realm_user events.
 */
export async function listUsersWhoMayAccess(q: Q, realmId: number, userId: number, isBot = false): Promise<number[]> {
  const realm = await getRealmById(q, realmId);
  const groupId = realm?.can_access_all_users_group;
  const [all, seeAll, sharing] = await Promise.all([
    listActiveUserIds(q, realmId),
    groupId == null ? Promise.resolve([] as number[]) : getRecursiveMemberIds(q, groupId),
    listUserIdsSharingRecipients(q, userId),
  ]);
  const everyone = new Set(seeAll);
  if (isBot || all.every((id) => everyone.has(id))) return all;
  const near = new Set(sharing);
  return all.filter((id) => id === userId || everyone.has(id) || near.has(id));
}
