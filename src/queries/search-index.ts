import type { Knex } from 'knex';
import { insertIgnoreInto } from '../db/connection';
import { holdWrite } from '../db/held-writes';
import { messageSearchTerms, prefixRange } from '../domain/search';
import type { NewId } from './ids';

/**
 * message_search_terms: one row per (word, message) (migration 021, ADR
 * 0013). Every write of a message's topic or content goes through here in
 * the same transaction, so a search sees an edit or a move as soon as it
 * is committed.
 */
type Q = Knex | Knex.Transaction;

export const SEARCH_TABLE = 'message_search_terms';

/**
 * Rows per INSERT: 2 variables each, under SQLite's 32,766; a rename of
 * thousands of messages stays one statement for its new words.
 */
const ROWS_PER_INSERT = 16000;

/**
 * Inserts (term, message id) pairs, skipping pairs already present. Nothing
 * reads the result: on MySQL the statement goes out with the transaction's
 * next statement or its COMMIT (src/db/held-writes.ts).
 */
export async function insertSearchRows(q: Q, rows: ReadonlyArray<readonly [string, NewId]>): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const slice = rows.slice(i, i + ROWS_PER_INSERT);
    await holdWrite(q, (ids) => ({
      sql: `${insertIgnoreInto(q)} ${SEARCH_TABLE} (term, message_id) VALUES ${slice.map(([, id]) => `(?, ${ids.sql(id)})`).join(', ')}`,
      bindings: slice.flatMap(([term, id]) => [term, ...ids.bindings(id)]),
    }));
  }
}

/** Indexes a new message. */
export async function indexNewMessage(q: Q, id: NewId, topic: string, content: string): Promise<void> {
  await insertSearchRows(
    q,
    messageSearchTerms(topic, content).map((t) => [t, id] as const),
  );
}

export interface SearchTextChange {
  id: number;
  before: { topic: string; content: string };
  after: { topic: string; content: string };
}

/**
 * Brings the rows of changed messages up to date: only the words that
 * appeared or disappeared are written, so renaming a topic of 10,000
 * messages touches the topic's words, not every word of every message.
 */
export async function reindexMessages(q: Q, changes: readonly SearchTextChange[]): Promise<void> {
  const removed = new Map<string, number[]>();
  const added: Array<readonly [string, number]> = [];
  for (const c of changes) {
    const before = new Set(messageSearchTerms(c.before.topic, c.before.content));
    const after = new Set(messageSearchTerms(c.after.topic, c.after.content));
    for (const t of before) if (!after.has(t)) removed.set(t, [...(removed.get(t) ?? []), c.id]);
    for (const t of after) if (!before.has(t)) added.push([t, c.id]);
  }
  for (const [term, ids] of removed) {
    for (let i = 0; i < ids.length; i += 5000)
      await q(SEARCH_TABLE)
        .where('term', term)
        .whereIn('message_id', ids.slice(i, i + 5000))
        .del();
  }
  await insertSearchRows(q, added);
}

/** Removes the rows of deleted messages. */
export async function deleteSearchRows(q: Q, ids: readonly number[]): Promise<void> {
  if (ids.length) await q(SEARCH_TABLE).whereIn('message_id', ids).del();
}

/**
 * The indexed words that begin with `prefix`, at most `max` of them; null
 * when there are more (a short prefix: the query then reads a range).
 * MariaDB reads one index entry per distinct word (a loose index scan).
 */
export async function listSearchTermsWithPrefix(q: Q, prefix: string, max: number): Promise<string[] | null> {
  const [from, to] = prefixRange(prefix);
  const terms: string[] = await q(SEARCH_TABLE)
    .where('term', '>=', from)
    .andWhere('term', '<', to)
    .distinct('term')
    .orderBy('term')
    .limit(max + 1)
    .pluck('term');
  return terms.length > max ? null : terms.map(String);
}
