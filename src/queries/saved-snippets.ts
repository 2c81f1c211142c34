import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { dialectOf } from '../db/connection';
import { insertOne, nowSeconds } from './ids';

type Q = Knex | Knex.Transaction;

export interface SavedSnippetRow {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

const COLUMNS = ['id', 'title', 'content', 'date_created'] as const;

const toRow = (r: Pick<TableRow<'saved_snippets'>, (typeof COLUMNS)[number]>): SavedSnippetRow => ({
  id: Number(r.id),
  title: String(r.title),
  content: String(r.content),
  date_created: Number(r.date_created),
});

export async function insertSavedSnippet(
  q: Q,
  row: { realmId: number; userId: number; title: string; content: string },
): Promise<SavedSnippetRow> {
  const date_created = nowSeconds();
  const id = await insertOne(q, 'saved_snippets', {
    realm_id: row.realmId,
    user_id: row.userId,
    title: row.title,
    content: row.content,
    date_created,
  });
  return { id, title: row.title, content: row.content, date_created };
}

/** The user's own snippet with this id, locked for the transaction's update; undefined for another user's or a missing one. */
export async function findOwnSavedSnippetForUpdate(q: Q, userId: number, id: number): Promise<SavedSnippetRow | undefined> {
  const query = q('saved_snippets')
    .where({ id, user_id: userId })
    .first(...COLUMNS);
  // SQLite has no row locks (its writer holds the database); knex warns on forUpdate there.
  if (dialectOf(q) === 'mysql') query.forUpdate();
  const row = await query;
  return row ? toRow(row) : undefined;
}

export async function updateSavedSnippet(q: Q, id: number, changes: { title?: string; content?: string }): Promise<void> {
  await q('saved_snippets').where({ id }).update(changes);
}

/** Deletes the user's own snippet; the number of rows deleted (0 for another user's or a missing one). */
export async function deleteOwnSavedSnippet(q: Q, userId: number, id: number): Promise<number> {
  return q('saved_snippets').where({ id, user_id: userId }).delete();
}
