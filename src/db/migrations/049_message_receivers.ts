import type { Knex } from 'knex';

/**
 * message_receivers (ADR 0059): per message, the users who may hold a
 * user_messages row for it, as one text list (src/queries/message-receivers.ts).
 *
 * MariaDB then drops user_messages_message_id_index. A send wrote an entry
 * of that index per receiver (a hundred for a hundred subscribers); it
 * writes one receivers row instead. The readers that found a message's rows
 * through the index probe the primary key (user_id, message_id) for each
 * listed user.
 *
 * SQLite keeps the index: there user_messages still has its foreign key to
 * messages (MariaDB dropped it, migration 025), and deleting a message makes
 * SQLite look for rows that point at it, by that index or by scanning the
 * table. The lists are written and read there too, so both databases run
 * the same statements.
 *
 * The lists of existing messages are made from their rows, through the
 * index, before MariaDB drops it: a few seconds for 14.5M rows on the
 * benchmark machine.
 */
const isMysql = (knex: Knex) => knex.client.config.client === 'mysql2';

/** Past this many rows the fill takes long enough to announce. */
const ANNOUNCE_ROWS = 1_000_000;

export async function up(knex: Knex): Promise<void> {
  // MariaDB commits each DDL statement: a run that failed after creating the table (the fill, or
  // dropping the index) left it behind, partly filled. A new run starts over.
  if (await knex.schema.hasTable('message_receivers')) await knex.schema.dropTable('message_receivers');
  await knex.schema.createTable('message_receivers', (t) => {
    t.integer('message_id').unsigned().notNullable().primary();
    // ASCII digits and commas; MEDIUMTEXT holds 16 MiB, some 2 million ids.
    t.text('user_ids', 'mediumtext').notNullable();
  });
  if (isMysql(knex)) {
    const [[status]] = (await knex.raw("SHOW TABLE STATUS LIKE 'user_messages'")) as unknown as [[{ Rows?: number } | undefined]];
    const rows = Number(status?.Rows ?? 0);
    if (rows >= ANNOUNCE_ROWS) process.stderr.write(`migration 049: listing the receivers of every message (about ${rows} rows)…\n`);
    // GROUP_CONCAT stops at group_concat_max_len (1 MiB by default): a list of 100,000 users is about 700 KB.
    await knex.transaction(async (trx) => {
      await trx.raw('SET SESSION group_concat_max_len = 16777216');
      await trx.raw(
        'INSERT INTO message_receivers (message_id, user_ids) ' +
          'SELECT message_id, GROUP_CONCAT(user_id ORDER BY user_id) FROM user_messages GROUP BY message_id',
      );
    });
    await knex.raw('ALTER TABLE user_messages DROP INDEX user_messages_message_id_index');
  } else {
    await knex.raw(
      'INSERT INTO message_receivers (message_id, user_ids) SELECT message_id, group_concat(user_id) FROM user_messages GROUP BY message_id',
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  if (isMysql(knex)) await knex.raw('ALTER TABLE user_messages ADD INDEX user_messages_message_id_index (message_id)');
  await knex.schema.dropTable('message_receivers');
}
