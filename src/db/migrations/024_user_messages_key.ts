import type { Knex } from 'knex';

/**
 * MariaDB: user_messages is keyed by (user_id, message_id), its natural key,
 * instead of a surrogate id that nothing reads.
 *
 * InnoDB stores a table in its primary key. With the surrogate key, a send
 * to 100 subscribers wrote each row into four B-trees (the id-ordered table,
 * the unique (user_id, message_id), message_id, and (user_id, is_unread,
 * message_id)); a page of GET /messages found its user_messages rows through
 * the unique index and then fetched each one's flags from the table, a
 * second lookup per message. Keyed by (user_id, message_id), a send writes
 * three B-trees and a page's flags are in the index it searches.
 * docs/adr/0017-user-messages-natural-key.md has the measurements. The
 * rebuild copies the table once: 39 s for 15M rows on the benchmark machine.
 *
 * SQLite keeps its rowid table: there a lookup by the unique index and then
 * by rowid is cheap, and changing a key means copying the table.
 */
const isMysql = (knex: Knex) => knex.client.config.client === 'mysql2';

/** Past this many rows the rebuild takes long enough to announce. */
const ANNOUNCE_ROWS = 1_000_000;

export async function up(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  // One ALTER reports no progress of its own: say what is happening before it starts.
  const [[status]] = (await knex.raw("SHOW TABLE STATUS LIKE 'user_messages'")) as unknown as [[{ Rows?: number } | undefined]];
  const rows = Number(status?.Rows ?? 0);
  if (rows >= ANNOUNCE_ROWS) {
    process.stderr.write(`migration 024: rebuilding user_messages (about ${rows} rows) with its new primary key…\n`);
  }
  // One statement, one table copy. The foreign keys of the sparse flag tables
  // (migration 022) point at (user_id, message_id): the new primary key.
  await knex.raw(
    'ALTER TABLE user_messages DROP PRIMARY KEY, DROP COLUMN id, ADD PRIMARY KEY (user_id, message_id), ' +
      'DROP INDEX user_messages_user_id_message_id_unique',
  );
}

export async function down(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.raw(
    'ALTER TABLE user_messages ADD UNIQUE KEY user_messages_user_id_message_id_unique (user_id, message_id), DROP PRIMARY KEY, ' +
      'ADD COLUMN id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY FIRST',
  );
}
