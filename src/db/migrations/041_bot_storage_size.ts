import type { Knex } from 'knex';

/**
 * bot_storage again, as GET/PUT/DELETE /bot_storage need it (nothing wrote
 * the table before those operations, so it is made anew, empty):
 * - `key` and `value` are MEDIUMTEXT on MariaDB: one value may be as long as
 *   a request body (5 MiB), where TEXT holds 64 KiB.
 * - `size`: the entry's length in characters (Unicode code points, as Zulip
 *   counts with Python's len), key and value together. Zulip's limit is on
 *   the sum over a bot's storage; a stored sum needs no character-counting
 *   SQL function, and SQLite's length() stops at a NUL character.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.dropTable('bot_storage');
  await knex.schema.createTable('bot_storage', (t) => {
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('key_hash', 64).notNullable();
    t.text('key', 'mediumtext').notNullable();
    t.text('value', 'mediumtext').notNullable();
    t.integer('size').unsigned().notNullable();
    t.primary(['user_id', 'key_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  // Back to migration 040's table: TEXT columns and no size. On MariaDB an
  // entry longer than TEXT holds makes this fail (strict mode), not truncate.
  await knex.schema.alterTable('bot_storage', (t) => {
    t.dropColumn('size');
    t.text('key').notNullable().alter();
    t.text('value').notNullable().alter();
  });
}
