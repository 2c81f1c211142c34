import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { invalidates } from '../db/invalidations';
import { CHANNEL_GROUP_SETTINGS, GROUP_GROUP_SETTINGS, REALM_GROUP_SETTINGS, type UserGroupSetting } from '../domain/group-settings';
import { insertOne, insertRows } from './ids';
import { mapBools, rawRows } from './rows';

type Q = Knex | Knex.Transaction;

/** A user group's permission-setting columns: each holds a group id, NULL while unset (nobody holds it). */
export type GroupSettingColumns = { [K in UserGroupSetting]: number | null };

/** A row of user_groups (booleans converted). A NULL name is an anonymous group backing a setting value. */
export interface UserGroupRow extends GroupSettingColumns {
  id: number;
  realm_id: number;
  name: string | null;
  description: string | null;
  is_system_group: boolean;
  creator_id: number | null;
  date_created: number | null;
  deactivated: boolean;
}

/** A new group: its organization and name; every other column may be left to the table's default. */
export type NewGroupRow = Pick<UserGroupRow, 'realm_id' | 'name'> & Partial<Omit<UserGroupRow, 'id' | 'realm_id' | 'name'>>;

export async function insertGroup(q: Q, row: NewGroupRow): Promise<number> {
  return insertOne(q, 'user_groups', row);
}

/** Sets permission settings on every group of the organization (a new organization's system groups). */
export async function updateGroupsOfRealm(q: Q, realmId: number, settings: Partial<GroupSettingColumns>): Promise<void> {
  await q('user_groups').where({ realm_id: realmId }).update(settings);
  invalidates(q, { kind: 'realm', realmId });
}

/** Who may add members to a group (the settings an invitation's groups are checked against). */
export async function getGroupMembershipSettings(
  q: Q,
  groupId: number,
): Promise<Pick<GroupSettingColumns, 'can_add_members_group' | 'can_manage_group'> | undefined> {
  return q('user_groups').where({ id: groupId }).first('can_add_members_group', 'can_manage_group');
}

/** Of these groups, the ones the user is a direct member of. */
export async function listDirectGroupIdsOfUser(q: Q, userId: number, among: number[]): Promise<number[]> {
  return (await q('group_members').where({ user_id: userId }).whereIn('group_id', among).pluck('group_id')).map(Number);
}

export async function addGroupMembers(q: Q, groupId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await insertRows(
    q,
    'group_members',
    userIds.map((user_id) => ({ group_id: groupId, user_id })),
    ['group_id', 'user_id'],
  );
  // Membership is recursive, but adding users to a group changes only their own set of groups.
  invalidates(q, { kind: 'user', userIds });
}

export async function removeGroupMembers(q: Q, groupId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await q('group_members').where({ group_id: groupId }).whereIn('user_id', userIds).delete();
  invalidates(q, { kind: 'user', userIds });
}

export async function addSubgroup(q: Q, supergroupId: number, subgroupId: number): Promise<void> {
  await q('group_subgroups').insert({ supergroup_id: supergroupId, subgroup_id: subgroupId });
  // Every member of the subgroup, recursively, is now in the supergroup and its
  // ancestors: coarse, the whole organization's callers.
  const group: { realm_id: number } | undefined = await q('user_groups').where({ id: supergroupId }).first('realm_id');
  invalidates(q, group ? { kind: 'realm', realmId: Number(group.realm_id) } : { kind: 'all' });
}

/** System group ids of a realm by name (role:members → id). */
export async function getSystemGroupIds(q: Q, realmId: number): Promise<Map<string, number>> {
  const rows = await q('user_groups').where({ realm_id: realmId, is_system_group: true }).select('id', 'name');
  // System groups are always named (role:members, …); only anonymous groups have no name.
  return new Map(rows.map((r) => [r.name as string, r.id]));
}

/**
 * Whether a user is in a group, directly or through any depth of subgroups.
 * One recursive CTE (supported by SQLite and MariaDB ≥ 10.2); deactivated
 * users are never members (feature level 303).
 */
export async function isUserInGroup(q: Q, groupId: number, userId: number, directOnly = false): Promise<boolean> {
  if (directOnly) {
    const row = await q('group_members as gm')
      .join('users as u', 'u.id', 'gm.user_id')
      .where({ 'gm.group_id': groupId, 'gm.user_id': userId, 'u.is_active': true })
      .first('gm.user_id');
    return row !== undefined;
  }
  const result = await q.raw(
    `WITH RECURSIVE g(id) AS (
       SELECT ? UNION SELECT gs.subgroup_id FROM group_subgroups gs JOIN g ON gs.supergroup_id = g.id
     )
     SELECT 1 AS hit FROM group_members gm JOIN g ON gm.group_id = g.id
       JOIN users u ON u.id = gm.user_id
     WHERE gm.user_id = ? AND u.is_active = 1 LIMIT 1`,
    [groupId, userId],
  );
  return rawRows<unknown>(result).length > 0;
}

/**
 * The SQL of a viewer's memberships, for a user given as an SQL expression
 * (a placeholder, or a subquery when authentication reads them by API key):
 * every group they belong to while active, recursively through subgroups, as
 * the CTE `g(id)`; and the FROM/WHERE of the realm's channels they are
 * subscribed to (recipient ids in `s.recipient_id`).
 */
export const viewerGroupsCte = (user: string) => `WITH RECURSIVE g(id) AS (
    SELECT gm.group_id FROM group_members gm JOIN users u ON u.id = gm.user_id WHERE gm.user_id = ${user} AND u.is_active = 1
    UNION SELECT gs.supergroup_id FROM group_subgroups gs JOIN g ON gs.subgroup_id = g.id
  )`;
export const viewerSubscriptionsFrom = (user: string, realm: string) =>
  `FROM subscriptions s JOIN channels c ON c.recipient_id = s.recipient_id WHERE s.user_id = ${user} AND s.active = 1 AND c.realm_id = ${realm}`;

/** What a viewer's permission checks need, in one round trip (loadViewer). */
export async function getViewerMemberships(
  q: Q,
  userId: number,
  realmId: number,
): Promise<{ groups: Set<number>; subscribedRecipients: Set<number> }> {
  const result = await q.raw(
    `${viewerGroupsCte('?')}
     SELECT 1 AS kind, id FROM g
     UNION ALL
     SELECT 2 AS kind, s.recipient_id AS id ${viewerSubscriptionsFrom('?', '?')}`,
    [userId, userId, realmId],
  );
  const groups = new Set<number>();
  const subscribedRecipients = new Set<number>();
  for (const r of rawRows<{ kind: number; id: number }>(result)) (Number(r.kind) === 1 ? groups : subscribedRecipients).add(Number(r.id));
  return { groups, subscribedRecipients };
}

/** Active members of a group and all its subgroups. */
export async function getRecursiveMemberIds(q: Q, groupId: number): Promise<number[]> {
  const result = await q.raw(
    `WITH RECURSIVE g(id) AS (
       SELECT ? UNION SELECT gs.subgroup_id FROM group_subgroups gs JOIN g ON gs.supergroup_id = g.id
     ) SELECT DISTINCT gm.user_id AS id FROM group_members gm JOIN g ON gm.group_id = g.id
       JOIN users u ON u.id = gm.user_id WHERE u.is_active = 1`,
    [groupId],
  );
  const rows = rawRows<{ id: number }>(result);
  return rows.map((r) => Number(r.id));
}

export type GroupRow = Pick<UserGroupRow, 'id' | 'realm_id' | 'name' | 'is_system_group' | 'deactivated'>;

export async function getGroupsByIds(q: Q, realmId: number, ids: number[]): Promise<Map<number, GroupRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q('user_groups')
    .where({ realm_id: realmId })
    .whereIn('id', [...new Set(ids)])
    .select('id', 'realm_id', 'name', 'is_system_group', 'deactivated');
  return new Map(
    rows.map((r): [number, GroupRow] => [r.id, { ...r, is_system_group: Boolean(r.is_system_group), deactivated: Boolean(r.deactivated) }]),
  );
}

/** Every group of the organization, anonymous ones (name NULL) included. */
export async function listRealmGroups(q: Q, realmId: number): Promise<UserGroupRow[]> {
  const rows = await q('user_groups').where({ realm_id: realmId }).orderBy('id');
  return rows.map((r) => mapBools<UserGroupRow>(r));
}

/** One group of the organization with every column, or undefined (another organization's groups are not found). */
export async function getGroupRow(q: Q, realmId: number, id: number): Promise<UserGroupRow | undefined> {
  const row = await q('user_groups').where({ id, realm_id: realmId }).first();
  return row ? mapBools<UserGroupRow>(row) : undefined;
}

/**
 * The named group of the organization holding this name, compared without
 * case: MariaDB's collation finds "Design" equal to "design" in the unique
 * (realm_id, name) index, so SQLite compares the same way to answer alike.
 */
export async function findGroupIdByName(q: Q, realmId: number, name: string): Promise<number | undefined> {
  const row = await q('user_groups').where({ realm_id: realmId }).whereRaw('LOWER(name) = LOWER(?)', [name]).first('id');
  return row ? Number(row.id) : undefined;
}

/**
 * Serializes changes to an organization's subgroup links (MariaDB locks the
 * organization's row; SQLite has one writer anyway), so that two additions
 * racing cannot close a cycle neither saw.
 */
export async function lockRealmGroups(trx: Knex.Transaction, realmId: number): Promise<void> {
  if (dialectOf(trx) === 'mysql') await trx('realms').where({ id: realmId }).forUpdate().first('id');
}

/** A named group's name, description, deactivation or permission settings. */
export async function updateGroup(
  q: Q,
  realmId: number,
  id: number,
  fields: Partial<Pick<UserGroupRow, 'name' | 'description' | 'deactivated'> & GroupSettingColumns>,
): Promise<void> {
  await q('user_groups').where({ id, realm_id: realmId }).update(fields);
  // Deactivation and settings change what group mentions and permission
  // checks see for the whole organization: its callers are dropped.
  invalidates(q, { kind: 'realm', realmId });
}

export async function removeSubgroups(q: Q, realmId: number, supergroupId: number, subgroupIds: number[]): Promise<void> {
  if (subgroupIds.length === 0) return;
  await q('group_subgroups').where({ supergroup_id: supergroupId }).whereIn('subgroup_id', subgroupIds).delete();
  // Recursive memberships of every member of those subgroups change: coarse, as addSubgroup.
  invalidates(q, { kind: 'realm', realmId });
}

/** Direct members of a group, deactivated users included (what membership edits check against). */
export async function listDirectMemberIds(q: Q, groupId: number, activeOnly: boolean): Promise<number[]> {
  const query = q('group_members as gm').where('gm.group_id', groupId).orderBy('gm.user_id');
  if (activeOnly) query.join('users as u', 'u.id', 'gm.user_id').where('u.is_active', true);
  return (await query.pluck('gm.user_id')).map(Number);
}

/** Direct subgroups of a group, or with `recursive` every group below it at any depth; by id. */
export async function listSubgroupIds(q: Q, groupId: number, recursive: boolean): Promise<number[]> {
  if (!recursive) {
    return (await q('group_subgroups').where({ supergroup_id: groupId }).orderBy('subgroup_id').pluck('subgroup_id')).map(Number);
  }
  const result = await q.raw(
    `WITH RECURSIVE g(id) AS (
       SELECT gs.subgroup_id FROM group_subgroups gs WHERE gs.supergroup_id = ?
       UNION SELECT gs.subgroup_id FROM group_subgroups gs JOIN g ON gs.supergroup_id = g.id
     ) SELECT id FROM g ORDER BY id`,
    [groupId],
  );
  return rawRows<{ id: number }>(result).map((r) => Number(r.id));
}

/** Whether `target` is one of these groups or below one of them at any depth (a link to it would close a cycle). */
export async function isAmongOrBelow(q: Q, groupIds: number[], target: number): Promise<boolean> {
  if (groupIds.length === 0) return false;
  if (groupIds.includes(target)) return true;
  const marks = groupIds.map(() => '?').join(', ');
  const result = await q.raw(
    `WITH RECURSIVE g(id) AS (
       SELECT gs.subgroup_id FROM group_subgroups gs WHERE gs.supergroup_id IN (${marks})
       UNION SELECT gs.subgroup_id FROM group_subgroups gs JOIN g ON gs.supergroup_id = g.id
     ) SELECT 1 AS hit FROM g WHERE id = ? LIMIT 1`,
    [...groupIds, target],
  );
  return rawRows<unknown>(result).length > 0;
}

/** The groups holding this one as a direct subgroup: named ones (not deactivated) and anonymous ones. */
export async function listDirectSupergroups(q: Q, groupId: number): Promise<{ named: number[]; anonymous: number[] }> {
  const rows: Array<{ id: number; name: string | null; deactivated: unknown }> = await q('group_subgroups as gs')
    .join('user_groups as g', 'g.id', 'gs.supergroup_id')
    .where('gs.subgroup_id', groupId)
    .orderBy('g.id')
    .select('g.id', 'g.name', 'g.deactivated');
  return {
    named: rows.filter((r) => r.name !== null && !r.deactivated).map((r) => Number(r.id)),
    anonymous: rows.filter((r) => r.name === null).map((r) => Number(r.id)),
  };
}

/** What holds one of these group ids in a permission setting: the organization, its channels not archived, its active named groups. */
export async function listSettingsUsingGroups(
  q: Q,
  realmId: number,
  groupIds: number[],
): Promise<{
  realm: string[];
  channels: Array<{ id: number; settings: string[] }>;
  groups: Array<{ id: number; settings: string[] }>;
}> {
  const ids = new Set(groupIds);
  const holding = (row: Record<string, unknown>, settings: readonly string[]) => settings.filter((s) => ids.has(Number(row[s])));
  const anyColumn = (qb: Knex.QueryBuilder, settings: readonly string[]) =>
    qb.where((w) => {
      for (const s of settings) w.orWhereIn(s, groupIds);
    });
  const realmRow = await q('realms')
    .where({ id: realmId })
    .first(...REALM_GROUP_SETTINGS);
  const channelRows = await anyColumn(q('channels').where({ realm_id: realmId, deactivated: false }), CHANNEL_GROUP_SETTINGS)
    .orderBy('id')
    .select('id', ...CHANNEL_GROUP_SETTINGS);
  const groupRows = await anyColumn(
    q('user_groups').where({ realm_id: realmId, deactivated: false }).whereNotNull('name'),
    GROUP_GROUP_SETTINGS,
  )
    .orderBy('id')
    .select('id', ...GROUP_GROUP_SETTINGS);
  return {
    realm: realmRow ? holding(realmRow, REALM_GROUP_SETTINGS) : [],
    channels: (channelRows as Array<Record<string, unknown>>).map((r) => ({
      id: Number(r.id),
      settings: holding(r, CHANNEL_GROUP_SETTINGS),
    })),
    groups: (groupRows as Array<Record<string, unknown>>).map((r) => ({ id: Number(r.id), settings: holding(r, GROUP_GROUP_SETTINGS) })),
  };
}
