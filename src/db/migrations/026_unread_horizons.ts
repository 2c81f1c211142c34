import type { Knex } from 'knex';

/**
 * Unread state leaves the index on user_messages' virtual `is_unread`
 * column for a per-user horizon and a side table (docs/adr/0024-unread-
 * without-a-write-per-receiver.md, src/queries/unread.ts):
 * - `unread_horizons (user_id, message_id)`: one message id per user; no row
 *   means 0;
 * - `user_message_unread (user_id, message_id)`: a superset of the user's
 *   unread rows at or below that id. Rows above it are found by the user's
 *   primary-key range, and `user_messages.flags` decides for both.
 * A send then writes nothing for unread: on MariaDB the index put each of a
 * send's rows into one more B-tree, a third of the send's database time.
 *
 * The copy reads the unread rows through the old index, before it is
 * dropped, and every user's horizon starts at the newest message id there
 * is: nothing is running while migrations do (the server migrates before it
 * listens), so no send can commit a row below it later. A side row
 * references its user_messages row and goes with it (ON DELETE CASCADE), as
 * the sparse flag tables' rows do (migration 022).
 *
 * Both databases: one model of unread state matters more than SQLite's
 * cheaper index entries.
 */
const isMysql = (knex: Knex) => knex.client.config.client === 'mysql2';
/** Progress is printed for copies of at least this many rows (never in tests). */
const REPORT_FROM = 100_000;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('unread_horizons', (t) => {
    t.integer('user_id').unsigned().notNullable().primary();
    t.integer('message_id').unsigned().notNullable();
  });
  await knex.schema.createTable('user_message_unread', (t) => {
    t.integer('user_id').unsigned().notNullable();
    t.integer('message_id').unsigned().notNullable();
    // (user_id, message_id): a user's old unread messages in id order, the narrow's scan.
    t.primary(['user_id', 'message_id']);
    t.foreign(['user_id', 'message_id']).references(['user_id', 'message_id']).inTable('user_messages').onDelete('CASCADE');
  });
  const [{ n }] = await knex('user_messages').whereRaw('is_unread = 1').count({ n: '*' });
  const report = Number(n) >= REPORT_FROM;
  if (report) process.stderr.write(`migration 026: copying ${Number(n)} unread rows into user_message_unread…\n`);
  // One statement through the index on (user_id, is_unread, message_id): the rows come in key order.
  await knex.raw('INSERT INTO user_message_unread (user_id, message_id) SELECT user_id, message_id FROM user_messages WHERE is_unread = 1');
  const newest = await knex('messages').max({ id: 'id' }).first();
  const horizon = Number(newest?.id ?? 0);
  await knex.raw('INSERT INTO unread_horizons (user_id, message_id) SELECT id, ? FROM users', [horizon]);
  if (isMysql(knex)) {
    // Dropping an index and its virtual column changes metadata only.
    await knex.raw('ALTER TABLE user_messages DROP INDEX user_messages_is_unread, DROP COLUMN is_unread');
  } else {
    await knex.raw('DROP INDEX user_messages_is_unread');
    await knex.raw('ALTER TABLE user_messages DROP COLUMN is_unread');
  }
  if (report) process.stderr.write('migration 026: done\n');
}

export async function down(knex: Knex): Promise<void> {
  if (isMysql(knex)) await knex.raw('ALTER TABLE user_messages ADD COLUMN is_unread TINYINT AS ((flags & 1) = 0) VIRTUAL');
  else await knex.raw('ALTER TABLE user_messages ADD COLUMN is_unread INTEGER GENERATED ALWAYS AS ((flags & 1) = 0) VIRTUAL');
  await knex.raw('CREATE INDEX user_messages_is_unread ON user_messages (user_id, is_unread, message_id)');
  await knex.schema.dropTable('user_message_unread');
  await knex.schema.dropTable('unread_horizons');
}
