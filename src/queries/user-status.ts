import type { Knex } from 'knex';
import type { TableInsert, TableRow } from '../../generated/tables';
import { invalidates } from '../db/invalidations';

type Q = Knex | Knex.Transaction;

export interface UserStatusRow {
  user_id: number;
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  /** The user's personal settings (JSON text): `away` is presence_enabled turned off. */
  settings: string;
}

/** COLUMNS as the driver returns them. */
type Selected = Pick<TableRow<'user_status'>, 'user_id' | 'status_text' | 'emoji_name' | 'emoji_code' | 'reaction_type'> &
  Pick<TableRow<'users'>, 'settings'>;

const toRow = (r: Selected): UserStatusRow => ({
  user_id: Number(r.user_id),
  status_text: String(r.status_text),
  emoji_name: String(r.emoji_name),
  emoji_code: String(r.emoji_code),
  reaction_type: String(r.reaction_type),
  settings: String(r.settings),
});

const COLUMNS = ['s.user_id', 's.status_text', 's.emoji_name', 's.emoji_code', 's.reaction_type', 'u.settings'];

/** The fields a status change sets: the text, the emoji (name, code and type together), or both. */
export interface StatusChange {
  status_text?: string;
  emoji?: { emoji_name: string; emoji_code: string; reaction_type: string };
}

/** Creates or updates the user's status row with the fields given; the others keep their value (empty when new). */
export async function upsertUserStatus(q: Q, realmId: number, userId: number, change: StatusChange, now: number): Promise<void> {
  const set: Omit<TableInsert<'user_status'>, 'user_id' | 'realm_id'> = { timestamp: now };
  if (change.status_text !== undefined) set.status_text = change.status_text;
  if (change.emoji) Object.assign(set, change.emoji);
  await q('user_status')
    .insert({ user_id: userId, realm_id: realmId, ...set })
    .onConflict('user_id')
    .merge(Object.keys(set) as Array<keyof typeof set>);
}

/** One user's status row, if they ever set one. */
export async function getUserStatusRow(q: Q, userId: number): Promise<UserStatusRow | undefined> {
  const row = (await q('user_status as s')
    .join('users as u', 'u.id', 's.user_id')
    .where('s.user_id', userId)
    .first(...COLUMNS)) as Selected | undefined;
  return row ? toRow(row) : undefined;
}

/** The status rows of the organization's active users. */
export async function listRealmUserStatuses(q: Q, realmId: number): Promise<UserStatusRow[]> {
  const rows = (await q('user_status as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.realm_id': realmId, 'u.is_active': true })
    .select(...COLUMNS)) as Selected[];
  return rows.map(toRow);
}

/** Writes a user's personal settings (JSON text). */
export async function updateUserSettingsText(q: Q, userId: number, settings: string): Promise<void> {
  await q('users').where({ id: userId }).update({ settings });
  invalidates(q, { kind: 'user', userIds: [userId] });
}
