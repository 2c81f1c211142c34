import type { AppContext } from '../context';
import type { Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { Role, roleSystemGroup, SYSTEM_GROUPS } from '../domain/roles';
import { insertAuditLog } from '../queries/audit';
import { addGroupMembers, getSystemGroupIds, listDirectGroupIdsOfUser, removeGroupMembers } from '../queries/groups';
import type { RealmRow, UserRow } from '../queries/rows';
import { toApiGroupMembersEvent } from '../serializers/users';
import { listActiveUserIds } from '../queries/users';

const DAY = 86400;

/**
 * The system groups a user of this role is a direct member of: the role's
 * group, and role:fullmembers too for a member past the organization's
 * waiting period (Zulip's full-member rule).
 */
export function directSystemGroups(role: number, dateJoined: number, realm: RealmRow, now: number): string[] {
  const groups = [roleSystemGroup(role)];
  if (role === Role.MEMBER && dateJoined + realm.waiting_period_threshold * DAY <= now) groups.push('role:fullmembers');
  return groups;
}

/**
 * Moves a user to the system groups of their (new) role, inside the
 * caller's transaction, and queues Zulip's user_group remove_members /
 * add_members events for every group that changed. `actorId` made the
 * change, for the audit log.
 */
export async function syncSystemGroupsInTx(
  tx: Tx,
  bus: AppContext['bus'],
  user: UserRow,
  realm: RealmRow,
  now: number,
  actorId: number | null,
): Promise<void> {
  const ids = await getSystemGroupIds(tx.trx, realm.id);
  const systemIds = SYSTEM_GROUPS.map((g) => ids.get(g.name)!);
  const current = await listDirectGroupIdsOfUser(tx.trx, user.id, systemIds);
  const wanted = directSystemGroups(user.role, user.date_joined, realm, now).map((name) => ids.get(name)!);
  const removed = current.filter((g) => !wanted.includes(g));
  const added = wanted.filter((g) => !current.includes(g));
  for (const g of removed) await removeGroupMembers(tx.trx, g, [user.id]);
  for (const g of added) await addGroupMembers(tx.trx, g, [user.id]);
  if (removed.length + added.length === 0) return;
  const audit = { realmId: realm.id, actorId, userId: user.id };
  await insertAuditLog(tx.trx, [
    ...removed.map((groupId) => ({ ...audit, eventType: AuditEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED, groupId })),
    ...added.map((groupId) => ({ ...audit, eventType: AuditEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, groupId })),
  ]);
  const audience = await listActiveUserIds(tx.trx, realm.id);
  tx.afterCommit(() => {
    for (const g of removed) bus.publish({ event: toApiGroupMembersEvent('remove_members', g, [user.id]), userIds: audience });
    for (const g of added) bus.publish({ event: toApiGroupMembersEvent('add_members', g, [user.id]), userIds: audience });
  });
}
