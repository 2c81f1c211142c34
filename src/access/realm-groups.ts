import type { Knex } from 'knex';
import type { Schema } from '../contract';
import { listRealmGroups, type UserGroupRow } from '../queries/groups';
import { listGroupMemberships, listSubgroupLinks } from '../queries/register';
import type { GroupLookup, GroupSettingValue } from '../serializers/subscriptions';
import { toApiUserGroup } from '../serializers/users';

export interface RealmGroups {
  lookup: GroupLookup;
  /** realm_user_groups: named and system groups (deactivated ones only for clients that filter them). */
  userGroups(includeDeactivated: boolean): Array<Schema<'UserGroup'>>;
  /** The id of one of the organization's system groups (role:everyone...). */
  systemGroupId(name: string): number | undefined;
}

const isNamed = (g: UserGroupRow): g is UserGroupRow & { name: string } => g.name !== null;

function byKey(rows: Array<{ key: number; value: number }>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const { key, value } of rows) {
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
  return out;
}

/**
 * The organization's groups with their direct members and subgroups, in
 * three statements; group-setting values are then lookups (an anonymous
 * group's value is its membership, a named group's its id).
 */
export async function loadRealmGroups(db: Knex, realmId: number): Promise<RealmGroups> {
  const [groups, members, links] = await Promise.all([
    listRealmGroups(db, realmId),
    listGroupMemberships(db, realmId),
    listSubgroupLinks(db, realmId),
  ]);
  const byId = new Map(groups.map((g) => [g.id, g]));
  const membersOf = byKey(members.map((m) => ({ key: m.group_id, value: m.user_id })));
  const subgroupsOf = byKey(links.map((l) => ({ key: l.supergroup_id, value: l.subgroup_id })));
  const nobody = groups.find((g) => g.is_system_group && g.name === 'role:nobody')?.id ?? 0;

  const lookup: GroupLookup = {
    value(groupId): GroupSettingValue {
      // An unset setting means nobody holds the permission.
      if (groupId == null) return nobody;
      const g = byId.get(groupId);
      if (!g || g.name !== null) return groupId;
      return { direct_members: membersOf.get(groupId) ?? [], direct_subgroups: subgroupsOf.get(groupId) ?? [] };
    },
    systemName: (groupId) => {
      const g = groupId == null ? undefined : byId.get(groupId);
      return g?.is_system_group ? (g.name ?? undefined) : undefined;
    },
  };

  return {
    lookup,
    systemGroupId: (name) => groups.find((g) => g.is_system_group && g.name === name)?.id,
    userGroups: (includeDeactivated) =>
      groups
        .filter(isNamed)
        .filter((g) => includeDeactivated || !g.deactivated)
        .map((g) => toApiUserGroup(g, membersOf.get(g.id) ?? [], subgroupsOf.get(g.id) ?? [], lookup)),
  };
}
