import type { AppContext } from '../context';
import type { Params } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import type { UserGroupSetting } from '../domain/group-settings';
import { ApiError } from '../errors';
import { accessUserGroupForUpdate } from '../access/user-groups';
import type { Caller } from '../access/viewer';
import type { ContractEvent } from '../events/bus';
import { insertAuditLog } from '../queries/audit';
import { addGroupMembers, listDirectMemberIds, removeGroupMembers } from '../queries/groups';
import { toApiGroupMembersEvent } from '../serializers/users';
import { resolveActiveUsers } from './user-group-create';
import { addSubgroupsInTx, removeSubgroupsInTx } from './user-group-subgroups';
import { queueGroupEvents } from './user-group-events';
import { notifyGroupMembershipInTx } from './user-group-notices';
import type { UserRow } from '../queries/rows';

/**
 * The group, checked under `own` when the caller names only themselves
 * (can_join_group / can_leave_group) and under `others` otherwise, or when
 * `own` does not allow it (Zulip's fallback: who may add anyone may add
 * themselves).
 */
async function accessForMembership(tx: Tx, c: Caller, groupId: number, ids: number[], own: UserGroupSetting, others: UserGroupSetting) {
  if (ids.length === 1 && ids[0] === c.user.id) {
    try {
      return await accessUserGroupForUpdate(tx.trx, c, groupId, own, true);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
  }
  return accessUserGroupForUpdate(tx.trx, c, groupId, others, true);
}

/** A membership change: its event, and whom the Notification Bot tells about it. */
interface MembershipChange {
  event: ContractEvent;
  groupName: string;
  users: UserRow[];
  added: boolean;
}

async function addMembersInTx(tx: Tx, c: Caller, groupId: number, ids: number[]): Promise<MembershipChange> {
  const group = await accessForMembership(tx, c, groupId, ids, 'can_join_group', 'can_add_members_group');
  const users = await resolveActiveUsers(tx.trx, c.realm.id, ids);
  const current = new Set(await listDirectMemberIds(tx.trx, groupId, false));
  const already = users.find((u) => current.has(u.id));
  if (already) throw new ApiError(`User ${already.id} is already a member of this group`);
  const userIds = users.map((u) => u.id);
  await addGroupMembers(tx.trx, groupId, userIds);
  const audit = { realmId: c.realm.id, actorId: c.user.id, groupId, eventType: AuditEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED };
  await insertAuditLog(
    tx.trx,
    userIds.map((userId) => ({ ...audit, userId })),
  );
  return { event: toApiGroupMembersEvent('add_members', groupId, userIds), groupName: group.name, users, added: true };
}

async function removeMembersInTx(tx: Tx, c: Caller, groupId: number, ids: number[]): Promise<MembershipChange> {
  // Zulip resolves the users before it checks the permission.
  const users = await resolveActiveUsers(tx.trx, c.realm.id, ids);
  const group = await accessForMembership(tx, c, groupId, ids, 'can_leave_group', 'can_remove_members_group');
  const current = new Set(await listDirectMemberIds(tx.trx, groupId, false));
  const absent = ids.find((id) => !current.has(id));
  if (absent !== undefined) throw new ApiError(`There is no member '${absent}' in this user group`);
  const userIds = users.map((u) => u.id);
  await removeGroupMembers(tx.trx, groupId, userIds);
  const audit = { realmId: c.realm.id, actorId: c.user.id, groupId, eventType: AuditEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED };
  await insertAuditLog(
    tx.trx,
    userIds.map((userId) => ({ ...audit, userId })),
  );
  return { event: toApiGroupMembersEvent('remove_members', groupId, userIds), groupName: group.name, users, added: false };
}

/**
 * POST /user_groups/{group}/members: additions, removals, then subgroup
 * additions and removals (feature level 311), in Zulip's order and in one
 * transaction: the first refusal leaves everything as it was. Each part
 * sends its own event to everyone; users added or removed by someone else
 * hear it from the Notification Bot (src/actions/user-group-notices.ts).
 */
export async function doUpdateUserGroupMembers(ctx: AppContext, c: Caller, p: Params<'update-user-group-members'>): Promise<void> {
  const add = p.add ?? [];
  const remove = p.delete ?? [];
  const addSubgroups = p.add_subgroups ?? [];
  const removeSubgroups = p.delete_subgroups ?? [];
  if (add.length + remove.length + addSubgroups.length + removeSubgroups.length === 0) {
    throw new ApiError('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".');
  }
  await inTransaction(ctx.db, async (tx) => {
    const members: MembershipChange[] = [];
    if (add.length) members.push(await addMembersInTx(tx, c, p.user_group_id, add));
    if (remove.length) members.push(await removeMembersInTx(tx, c, p.user_group_id, remove));
    const events: ContractEvent[] = members.map((m) => m.event);
    if (addSubgroups.length) events.push(await addSubgroupsInTx(tx, c, p.user_group_id, addSubgroups));
    if (removeSubgroups.length) events.push(await removeSubgroupsInTx(tx, c, p.user_group_id, removeSubgroups));
    await queueGroupEvents(tx, ctx.bus, c.realm.id, events);
    // The notices come after the group's events, in the same transaction: a refusal sends none.
    for (const m of members) await notifyGroupMembershipInTx(tx, ctx.bus, c, m.groupName, m.users, m.added);
  });
}
