import type { Knex } from 'knex';

/**
 * Bots (Zulip's bot accounts are users with is_bot and a bot_type; see
 * docs/architecture/bots.md):
 * - users gain a bot's defaults: the channel its messages go to when a
 *   request names none, the channel its event queues follow, and whether
 *   they follow every public channel (Zulip's default_sending_stream,
 *   default_events_register_stream, default_all_public_streams).
 * - bot_services: an outgoing-webhook bot's endpoint (Zulip's Service): the
 *   URL its triggers are POSTed to, the token sent with each, and the payload
 *   interface (1 Zulip's, 2 Slack's outgoing webhook).
 * - bot_storage: a bot's key-value store (GET/PUT/DELETE /bot_storage). A key
 *   is any text, so its uniqueness per bot is on `key_hash`, its SHA-256.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.integer('default_sending_channel_id').unsigned().nullable();
    t.integer('default_events_register_channel_id').unsigned().nullable();
    t.boolean('default_all_public_streams').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('bot_services', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.text('base_url').notNullable();
    t.string('token', 64).notNullable();
    t.smallint('interface').unsigned().notNullable().defaultTo(1);
    t.index(['user_id'], 'bot_services_user');
  });
  await knex.schema.createTable('bot_storage', (t) => {
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('key_hash', 64).notNullable();
    // MEDIUMTEXT on MariaDB: one value may be as long as a request body (5 MiB); TEXT holds 64 KiB.
    t.text('key', 'mediumtext').notNullable();
    t.text('value', 'mediumtext').notNullable();
    // The entry's length in characters (code points, as Zulip counts with Python's len), key and
    // value together: Zulip's limit is on the sum over a bot's storage, and a stored sum needs no
    // character-counting SQL (SQLite's length() stops at a NUL character).
    t.integer('size').unsigned().notNullable();
    t.primary(['user_id', 'key_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('bot_storage');
  await knex.schema.dropTable('bot_services');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('default_sending_channel_id');
    t.dropColumn('default_events_register_channel_id');
    t.dropColumn('default_all_public_streams');
  });
}
