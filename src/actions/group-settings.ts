import type { Tx } from '../db/transaction';
import type { GroupSettingRule, GroupSettingValue } from '../domain/group-settings';
import { ApiError } from '../errors';
import { addGroupMembers, addSubgroup, getGroupsByIds, getSystemGroupIds, insertGroup } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import { listUsersByIds } from '../queries/users';

/**
 * Stores a group-setting value and returns the group id to keep in the
 * setting's column: a named or system group's own id, or a new anonymous
 * group for {direct_members, direct_subgroups}. Zulip's canonical form is
 * applied ({[], [G]} is just G) and its rules on system groups enforced.
 */
export async function storeGroupSettingInTx(
  tx: Tx,
  realmId: number,
  setting: string,
  value: GroupSettingValue,
  rule: GroupSettingRule,
): Promise<number> {
  const system = await getSystemGroupIds(tx.trx, realmId);
  if (typeof value !== 'number' && value.direct_members.length === 0 && value.direct_subgroups.length === 1) {
    value = value.direct_subgroups[0]!;
  } else if (typeof value !== 'number' && value.direct_members.length === 0 && value.direct_subgroups.length === 0) {
    // Zulip stores an empty anonymous group as role:nobody (then subject to allowNobody).
    value = system.get('role:nobody')!;
  }
  const name = (id: number) => [...system.entries()].find(([, gid]) => gid === id)?.[0];
  const referenced = typeof value === 'number' ? [value] : value.direct_subgroups;
  const groups = await getGroupsByIds(tx.trx, realmId, referenced);
  for (const id of referenced) {
    const g = groups.get(id);
    // Anonymous groups cannot be referenced by id; deactivated ones cannot be given new permissions.
    if (!g || g.name === null || g.deactivated) throw new ApiError('Invalid user group ID: ' + id);
    const sys = name(id);
    if (sys === 'role:internet' && !rule.allowInternet) throw new ApiError(`'${setting}' setting cannot be set to 'role:internet' group.`);
    if (sys === 'role:everyone' && !rule.allowEveryone) throw new ApiError(`'${setting}' setting cannot be set to 'role:everyone' group.`);
    if (sys === 'role:nobody' && !rule.allowNobody) throw new ApiError(`'${setting}' setting cannot be set to 'role:nobody' group.`);
  }
  if (typeof value === 'number') return value;
  const members = [...new Set(value.direct_members)];
  if (members.length) {
    // Zulip refuses deactivated users here as it does unknown ones.
    const found = new Set((await listUsersByIds(tx.trx, realmId, members)).filter((u) => u.is_active).map((u) => u.id));
    const missing = members.find((m) => !found.has(m));
    if (missing !== undefined) throw new ApiError(`Invalid user ID: ${missing}`);
  }
  const id = await insertGroup(tx.trx, { realm_id: realmId, name: null, date_created: nowSeconds() });
  await addGroupMembers(tx.trx, id, members);
  for (const sub of new Set(value.direct_subgroups)) await addSubgroup(tx.trx, id, sub);
  return id;
}
