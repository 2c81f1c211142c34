import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { dialectOf } from '../db/connection';
import type { PresenceTimes } from '../domain/presence';

type Q = Knex | Knex.Transaction;

/** The columns of a LEFT JOIN's right side: NULL when no row matched. */
type NullWhenAbsent<T> = { [K in keyof T]: T[K] | null };

const timeOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** What a presence report reads: the organization's switch and the user's row (undefined: never reported). One statement. */
export async function getPresenceForReport(
  q: Q,
  realmId: number,
  userId: number,
): Promise<{ presenceDisabled: boolean; times: PresenceTimes | undefined }> {
  const row = (await q('realms as r')
    .leftJoin('user_presence as p', (j) => j.on('p.user_id', '=', q.raw('?', [userId])))
    .where('r.id', realmId)
    .first('r.presence_disabled', 'p.user_id', 'p.last_active_time', 'p.last_connected_time')) as
    | (Pick<TableRow<'realms'>, 'presence_disabled'> &
        NullWhenAbsent<Pick<TableRow<'user_presence'>, 'user_id' | 'last_active_time' | 'last_connected_time'>>)
    | undefined;
  const times =
    row && row.user_id !== null && row.user_id !== undefined
      ? { last_active_time: timeOrNull(row.last_active_time), last_connected_time: timeOrNull(row.last_connected_time) }
      : undefined;
  return { presenceDisabled: Boolean(row?.presence_disabled), times };
}

export async function isPresenceDisabled(q: Q, realmId: number): Promise<boolean> {
  const row = await q('realms').where({ id: realmId }).first('presence_disabled');
  return Boolean(row?.presence_disabled);
}

/**
 * The organization's next presence update id. The UPDATE locks the
 * organization's sequence row until the transaction ends, so the ids of one
 * organization commit in increasing order. MariaDB has no UPDATE …
 * RETURNING: LAST_INSERT_ID(expr) hands the new value back as the
 * statement's insert id instead. The row is created on first use.
 */
async function nextPresenceUpdateId(trx: Knex.Transaction, realmId: number): Promise<number> {
  for (;;) {
    if (dialectOf(trx) === 'mysql') {
      const [header] = (await trx.raw(
        'UPDATE presence_sequence SET last_update_id = LAST_INSERT_ID(last_update_id + 1) WHERE realm_id = ?',
        [realmId],
      )) as [{ affectedRows: number; insertId: number }];
      if (header.affectedRows > 0) return Number(header.insertId);
    } else {
      const rows = (await trx.raw(
        'UPDATE presence_sequence SET last_update_id = last_update_id + 1 WHERE realm_id = ? RETURNING last_update_id',
        [realmId],
      )) as Array<{ last_update_id: number }>;
      if (rows.length > 0) return Number(rows[0]!.last_update_id);
    }
    await trx('presence_sequence').insert({ realm_id: realmId, last_update_id: 0 }).onConflict('realm_id').ignore();
  }
}

/** Writes a user's presence (one upsert) under the organization's next update id; returns that id. */
export async function writePresence(trx: Knex.Transaction, realmId: number, userId: number, times: PresenceTimes): Promise<number> {
  const id = await nextPresenceUpdateId(trx, realmId);
  await trx('user_presence')
    .insert({ user_id: userId, realm_id: realmId, ...times, last_update_id: id })
    .onConflict('user_id')
    .merge(['last_active_time', 'last_connected_time', 'last_update_id']);
  return id;
}

export interface PresenceListRow extends PresenceTimes {
  user_id: number;
  email: string;
  date_joined: number;
  last_update_id: number;
}

/** LIST_COLUMNS as the driver returns them. */
type ListSelected = Pick<TableRow<'user_presence'>, 'user_id' | 'last_active_time' | 'last_connected_time' | 'last_update_id'> &
  Pick<TableRow<'users'>, 'email' | 'date_joined'>;

const toListRow = (r: ListSelected): PresenceListRow => ({
  user_id: Number(r.user_id),
  email: String(r.email),
  date_joined: Number(r.date_joined),
  last_active_time: timeOrNull(r.last_active_time),
  last_connected_time: timeOrNull(r.last_connected_time),
  last_update_id: Number(r.last_update_id),
});

const LIST_COLUMNS = ['p.user_id', 'u.email', 'u.date_joined', 'p.last_active_time', 'p.last_connected_time', 'p.last_update_id'];

/**
 * Presence rows of the organization's active human users: changed after
 * `afterUpdateId` (index realm_id, last_update_id) and/or connected since
 * `connectedSince` (index realm_id, last_connected_time).
 */
export async function listRealmPresence(
  q: Q,
  realmId: number,
  filter: { afterUpdateId?: number; connectedSince?: number },
): Promise<PresenceListRow[]> {
  const query = q('user_presence as p')
    .join('users as u', 'u.id', 'p.user_id')
    .where('p.realm_id', realmId)
    .where('u.is_active', true)
    .where('u.is_bot', false)
    .select(...LIST_COLUMNS);
  if (filter.afterUpdateId !== undefined) query.where('p.last_update_id', '>', filter.afterUpdateId);
  if (filter.connectedSince !== undefined) query.where('p.last_connected_time', '>=', filter.connectedSince);
  const rows = (await query) as ListSelected[];
  return rows.map(toListRow);
}

/** One user's presence row, undefined if they never reported. */
export async function getUserPresence(q: Q, userId: number): Promise<PresenceListRow | undefined> {
  const row = (await q('user_presence as p')
    .join('users as u', 'u.id', 'p.user_id')
    .where('p.user_id', userId)
    .first(...LIST_COLUMNS)) as ListSelected | undefined;
  return row ? toListRow(row) : undefined;
}
