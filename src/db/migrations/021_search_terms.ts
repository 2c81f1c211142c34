import type { Knex } from 'knex';
import { messageSearchTerms } from '../../domain/search';
import * as m002 from './002_message_search';

/**
 * Full-text search reads a table of (word, message id) pairs instead of
 * InnoDB FULLTEXT / SQLite FTS5 (ADR 0013): a page of results is a walk
 * backwards over message ids, where FULLTEXT returned every match before the
 * page was cut. The same table and the same tokenizer on both databases.
 *
 * `term` compares byte for byte (utf8mb4_bin): words are folded before they
 * are stored, and a case- or accent-insensitive collation would call two
 * stored words equal. The second index, (message_id, term), serves the
 * probe "does this message contain a word beginning with …" and deletions.
 *
 * Existing messages are indexed in batches of BATCH by id, with progress on
 * stderr for large tables; then the old full-text structures are dropped
 * (they cost every send and no query reads them any more).
 */
const BATCH = 2000;
const TABLE = 'message_search_terms';

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  if (mysql) {
    await knex.raw(`CREATE TABLE ${TABLE} (
      term VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      message_id INT UNSIGNED NOT NULL,
      PRIMARY KEY (term, message_id),
      KEY message_search_terms_message (message_id, term)
    )`);
  } else {
    await knex.raw(`CREATE TABLE ${TABLE} (
      term TEXT NOT NULL,
      message_id INTEGER NOT NULL,
      PRIMARY KEY (term, message_id)
    ) WITHOUT ROWID`);
    await knex.raw(`CREATE INDEX message_search_terms_message ON ${TABLE} (message_id, term)`);
  }
  await backfill(knex, mysql);
  if (mysql) {
    await knex.raw('ALTER TABLE messages DROP INDEX messages_fulltext');
  } else {
    for (const t of ['messages_fts_insert', 'messages_fts_delete', 'messages_fts_update']) await knex.raw(`DROP TRIGGER IF EXISTS ${t}`);
    await knex.raw('DROP TABLE IF EXISTS messages_fts');
  }
}

async function backfill(knex: Knex, mysql: boolean): Promise<void> {
  const total = Number((await knex('messages').count({ n: '*' }).first())?.n ?? 0);
  const report = total > 20 * BATCH;
  const verb = mysql ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO';
  let last = 0;
  let done = 0;
  for (;;) {
    const rows: Array<{ id: number; topic: string; content: string }> = await knex('messages')
      .where('id', '>', last)
      .orderBy('id')
      .limit(BATCH)
      .select('id', 'topic', 'content');
    if (rows.length === 0) break;
    const pairs: Array<string | number> = [];
    for (const r of rows) for (const t of messageSearchTerms(r.topic, r.content)) pairs.push(t, Number(r.id));
    for (let i = 0; i < pairs.length; i += 2000) {
      const slice = pairs.slice(i, i + 2000);
      await knex.raw(
        `${verb} ${TABLE} (term, message_id) VALUES ${Array.from({ length: slice.length / 2 }, () => '(?, ?)').join(', ')}`,
        slice,
      );
    }
    last = Number(rows[rows.length - 1]!.id);
    done += rows.length;
    if (report) process.stderr.write(`021_search_terms: indexed ${done} of ${total} messages\n`);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable(TABLE);
  await m002.up(knex);
}
