import type { Knex } from 'knex';
import { Role } from '../domain/roles';
import { mapBools, type UserRow } from './rows';

type Q = Knex | Knex.Transaction;

/** GET /bots: the owner's active bots, oldest first (Zulip orders by date_joined). */
export async function listActiveBotsOwnedBy(q: Q, ownerId: number): Promise<UserRow[]> {
  const rows = await q('users').where({ bot_owner_id: ownerId, is_bot: true, is_active: true }).orderBy(['date_joined', 'id']);
  return rows.map((r) => mapBools<UserRow>(r));
}

/** The organization's bots (all of them, or one owner's), deactivated ones included, by id: register's realm_bots. */
export async function listRealmBots(q: Q, realmId: number, ownerId: number | null): Promise<UserRow[]> {
  const query = q('users').where({ realm_id: realmId, is_bot: true }).orderBy('id');
  if (ownerId !== null) query.where('bot_owner_id', ownerId);
  return (await query).map((r) => mapBools<UserRow>(r));
}

/** A channel a bot names as a default: its name and whether it is private. */
export interface DefaultChannel {
  name: string;
  invite_only: boolean;
}

/** The channels of these ids, by id (ids of nothing are left out). */
export async function listDefaultChannels(q: Q, ids: ReadonlyArray<number | null>): Promise<Map<number, DefaultChannel>> {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows: Array<{ id: number; name: string; invite_only: unknown }> = await q('channels')
    .whereIn('id', wanted)
    .select('id', 'name', 'invite_only');
  return new Map(rows.map((r) => [Number(r.id), { name: String(r.name), invite_only: Boolean(r.invite_only) }]));
}

/** The organization's active human administrators and owners (Zulip's get_human_admin_users). */
export async function listActiveHumanAdminIds(q: Q, realmId: number): Promise<number[]> {
  const ids: Array<number | string> = await q('users')
    .where({ realm_id: realmId, is_active: true, is_bot: false })
    .whereIn('role', [Role.OWNER, Role.ADMINISTRATOR])
    .orderBy('id')
    .pluck('id');
  return ids.map(Number);
}

/**
 * Whether an active account of the organization has exactly this name
 * (Zulip's check_bot_name_available). The comparison is made here, not by
 * the database, whose collation may ignore case on MariaDB.
 */
export async function isNameOfActiveUser(q: Q, realmId: number, fullName: string): Promise<boolean> {
  const names: string[] = await q('users').where({ realm_id: realmId, is_active: true, full_name: fullName }).pluck('full_name');
  return names.some((n) => n === fullName);
}
