import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { dialectOf } from '../db/connection';
import type { DraftType } from '../domain/drafts';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** A draft as stored: what it addresses, its text, and its last edit in microseconds. */
export interface DraftRow {
  id: number;
  type: DraftType;
  channel_id: number | null;
  /** The other users of a direct message draft (or the user alone, for a draft to themselves), sorted. */
  dm_user_ids: number[];
  topic: string;
  content: string;
  last_edit_time: number;
}

/** A draft's fields as an insert or an edit writes them. */
export type DraftFields = Omit<DraftRow, 'id'>;

const COLUMNS = ['id', 'type', 'channel_id', 'dm_user_ids', 'topic', 'content', 'last_edit_time'] as const;

const toRow = (r: Pick<TableRow<'drafts'>, (typeof COLUMNS)[number]>): DraftRow => ({
  id: Number(r.id),
  type: String(r.type) as DraftType,
  channel_id: r.channel_id === null ? null : Number(r.channel_id),
  dm_user_ids: String(r.dm_user_ids) === '' ? [] : String(r.dm_user_ids).split(',').map(Number),
  topic: String(r.topic),
  content: String(r.content),
  last_edit_time: Number(r.last_edit_time),
});

const toColumns = (d: DraftFields) => ({
  type: d.type,
  channel_id: d.channel_id,
  dm_user_ids: d.dm_user_ids.join(','),
  topic: d.topic,
  content: d.content,
  last_edit_time: d.last_edit_time,
});

/** Inserts the drafts in order; their ids in the same order. */
export async function insertDrafts(q: Q, realmId: number, userId: number, drafts: readonly DraftFields[]): Promise<number[]> {
  const ids: number[] = [];
  for (const d of drafts) ids.push(await insertOne(q, 'drafts', { realm_id: realmId, user_id: userId, ...toColumns(d) }));
  return ids;
}

/**
 * The user's drafts by last edit: oldest first (GET /drafts) or newest
 * first (POST /register), at most `limit`; ties by id.
 */
export async function listDrafts(q: Q, userId: number, order: 'asc' | 'desc', limit?: number): Promise<DraftRow[]> {
  const query = q('drafts')
    .where({ user_id: userId })
    .orderBy([
      { column: 'last_edit_time', order },
      { column: 'id', order },
    ])
    .select(...COLUMNS);
  if (limit !== undefined) query.limit(limit);
  return (await query).map(toRow);
}

/** The user's own draft with this id, locked for the transaction's update; undefined for another user's or a missing one. */
export async function findOwnDraftForUpdate(q: Q, userId: number, id: number): Promise<DraftRow | undefined> {
  const query = q('drafts')
    .where({ id, user_id: userId })
    .first(...COLUMNS);
  // SQLite has no row locks (its writer holds the database); knex warns on forUpdate there.
  if (dialectOf(q) === 'mysql') query.forUpdate();
  const row = await query;
  return row ? toRow(row) : undefined;
}

export async function updateDraft(q: Q, id: number, fields: DraftFields): Promise<void> {
  await q('drafts').where({ id }).update(toColumns(fields));
}

/** Deletes the user's own draft; the number of rows deleted (0 for another user's or a missing one). */
export async function deleteOwnDraft(q: Q, userId: number, id: number): Promise<number> {
  return q('drafts').where({ id, user_id: userId }).delete();
}

/** Deletes every draft of the user's (synchronization turned off). */
export async function deleteAllDrafts(q: Q, userId: number): Promise<number> {
  return q('drafts').where({ user_id: userId }).delete();
}
