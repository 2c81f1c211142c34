import type { AppContext } from '../context';
import type { Params } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType, type AuditEntry } from '../domain/audit';
import { ApiError } from '../errors';
import { accessUserGroupForUpdate } from '../access/user-groups';
import type { Caller } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import { addSubgroup, getGroupsByIds, isAmongOrBelow, listSubgroupIds, lockRealmGroups, removeSubgroups } from '../queries/groups';
import type { ContractEvent } from '../events/bus';
import { toApiUserGroupSubgroupsEvent } from '../serializers/user-groups';
import { queueGroupEvents } from './user-group-events';

/**
 * Subgroups named in a request, checked as Zulip's
 * lock_subgroups_with_respect_to_supergroup does: each must be a named
 * group of the organization ("Invalid user group ID: N", the first missing)
 * that is not deactivated.
 */
async function checkSubgroupsExist(trx: Tx['trx'], realmId: number, ids: number[]): Promise<void> {
  const found = await getGroupsByIds(trx, realmId, ids);
  const missing = ids.find((id) => found.get(id)?.name == null);
  if (missing !== undefined) throw new ApiError(`Invalid user group ID: ${missing}`);
  if (ids.some((id) => found.get(id)!.deactivated)) throw new ApiError('User group is deactivated.');
}

/**
 * Groups about to become direct subgroups of `supergroupId`: they must exist
 * and be active, not already be direct subgroups, and not hold the
 * supergroup at any depth (nor be it): a link closing a cycle is refused
 * with Zulip's message. The caller holds lockRealmGroups.
 */
export async function checkNewSubgroups(
  trx: Tx['trx'],
  realmId: number,
  supergroupId: number,
  ids: number[],
  existing: number[],
): Promise<void> {
  await checkSubgroupsExist(trx, realmId, ids);
  const already = ids.find((id) => existing.includes(id));
  if (already !== undefined) throw new ApiError(`User group ${already} is already a subgroup of this group.`);
  if (await isAmongOrBelow(trx, ids, supergroupId)) {
    throw new ApiError(`User group ${supergroupId} is already a subgroup of one of the passed subgroups.`);
  }
}

/**
 * Zulip's audit rows for subgroup links: one on the supergroup naming the
 * subgroups, and one on each subgroup naming the supergroup.
 */
export function subgroupAuditRows(
  base: Omit<AuditEntry, 'eventType' | 'groupId'>,
  supergroupId: number,
  subgroupIds: number[],
  change: 'added' | 'removed',
): AuditEntry[] {
  if (subgroupIds.length === 0) return [];
  const added = change === 'added';
  return [
    {
      ...base,
      groupId: supergroupId,
      eventType: added
        ? AuditEventType.USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED
        : AuditEventType.USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_REMOVED,
      extra: { subgroup_ids: subgroupIds },
    },
    ...subgroupIds.map((groupId) => ({
      ...base,
      groupId,
      eventType: added
        ? AuditEventType.USER_GROUP_DIRECT_SUPERGROUP_MEMBERSHIP_ADDED
        : AuditEventType.USER_GROUP_DIRECT_SUPERGROUP_MEMBERSHIP_REMOVED,
      extra: { supergroup_ids: [supergroupId] },
    })),
  ];
}

/**
 * Adds direct subgroups (the group's can_add_members_group, or managing it);
 * the group itself may be deactivated (feature level 391). Returns the event.
 */
export async function addSubgroupsInTx(tx: Tx, c: Caller, groupId: number, ids: number[]): Promise<ContractEvent> {
  const { trx } = tx;
  const realmId = c.realm.id;
  await lockRealmGroups(trx, realmId);
  await accessUserGroupForUpdate(trx, c, groupId, 'can_add_members_group', true);
  const unique = [...new Set(ids)];
  await checkNewSubgroups(trx, realmId, groupId, unique, await listSubgroupIds(trx, groupId, false));
  for (const sub of unique) await addSubgroup(trx, groupId, sub);
  await insertAuditLog(trx, subgroupAuditRows({ realmId, actorId: c.user.id }, groupId, unique, 'added'));
  return toApiUserGroupSubgroupsEvent('add_subgroups', groupId, unique);
}

/** Removes direct subgroups; Zulip asks can_manage_group for it (not can_remove_members_group). */
export async function removeSubgroupsInTx(tx: Tx, c: Caller, groupId: number, ids: number[]): Promise<ContractEvent> {
  const { trx } = tx;
  const realmId = c.realm.id;
  await lockRealmGroups(trx, realmId);
  await accessUserGroupForUpdate(trx, c, groupId, 'can_manage_group', true);
  const unique = [...new Set(ids)];
  await checkSubgroupsExist(trx, realmId, unique);
  const existing = await listSubgroupIds(trx, groupId, false);
  const absent = unique.find((id) => !existing.includes(id));
  if (absent !== undefined) throw new ApiError(`User group ${absent} is not a subgroup of this group.`);
  await removeSubgroups(trx, realmId, groupId, unique);
  await insertAuditLog(trx, subgroupAuditRows({ realmId, actorId: c.user.id }, groupId, unique, 'removed'));
  return toApiUserGroupSubgroupsEvent('remove_subgroups', groupId, unique);
}

/** POST /user_groups/{group}/subgroups: additions then removals, all or nothing. */
export async function doUpdateUserGroupSubgroups(ctx: AppContext, c: Caller, p: Params<'update-user-group-subgroups'>): Promise<void> {
  const add = p.add ?? [];
  const remove = p.delete ?? [];
  if (add.length === 0 && remove.length === 0) throw new ApiError('Nothing to do. Specify at least one of "add" or "delete".');
  await inTransaction(ctx.db, async (tx) => {
    const events: ContractEvent[] = [];
    if (add.length) events.push(await addSubgroupsInTx(tx, c, p.user_group_id, add));
    if (remove.length) events.push(await removeSubgroupsInTx(tx, c, p.user_group_id, remove));
    await queueGroupEvents(tx, ctx.bus, c.realm.id, events);
  });
}
