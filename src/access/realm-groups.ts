import type { Knex } from 'knex';
import { GROUP_GROUP_SETTINGS } from '../domain/group-settings';
import { GroupRow, listGroupMemberships, listRealmGroups, listSubgroupLinks } from '../queries/register';
import type { GroupLookup, GroupSettingValue } from '../serializers/subscriptions';

export interface RealmGroups {
  lookup: GroupLookup;
  /** realm_user_groups: named and system groups (deactivated ones only for clients that filter them). */
  userGroups(includeDeactivated: boolean): Array<Record<string, unknown>>;
}

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

  const toApiGroup = (g: GroupRow) => {
    const out: Record<string, unknown> = {
      id: g.id,
      name: g.name,
      description: g.description ?? '',
      members: membersOf.get(g.id) ?? [],
      direct_subgroup_ids: subgroupsOf.get(g.id) ?? [],
      is_system_group: g.is_system_group,
      date_created: g.date_created,
      creator_id: g.creator_id,
      deactivated: g.deactivated,
    };
    for (const s of GROUP_GROUP_SETTINGS) out[s] = lookup.value(g[s] as number | null);
    return out;
  };

  return {
    lookup,
    userGroups: (includeDeactivated) => groups.filter((g) => g.name !== null && (includeDeactivated || !g.deactivated)).map(toApiGroup),
  };
}
