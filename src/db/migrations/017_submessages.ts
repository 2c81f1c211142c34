import type { Knex } from 'knex';

/**
 * submessages: widget data attached to a message (Zulip's SubMessage): the
 * widget itself (msg_type "widget", written when a /poll or /todo message is
 * sent) and every later update (a vote, a new option, a struck task), in the
 * order they arrived. archived_submessages keeps them with their deleted
 * message, as the other archived_* tables do. messages.has_submessages marks
 * the few messages that have any, so fetching reads submessages only for
 * them (as has_edit_history does for edits) rather than for every page.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('submessages', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('message_id').unsigned().notNullable().references('id').inTable('messages').onDelete('CASCADE');
    t.integer('sender_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('msg_type', 100).notNullable();
    t.text('content', 'mediumtext').notNullable();
    t.index(['message_id', 'id'], 'submessages_message_id');
  });
  await knex.schema.alterTable('messages', (t) => {
    t.boolean('has_submessages').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('archived_submessages', (t) => {
    t.integer('id').unsigned().primary(); // the original submessage id
    t.integer('message_id').unsigned().notNullable().index();
    t.integer('sender_id').unsigned().notNullable();
    t.string('msg_type', 100).notNullable();
    t.text('content', 'mediumtext').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.dropColumn('has_submessages');
  });
  await knex.schema.dropTable('archived_submessages');
  await knex.schema.dropTable('submessages');
}
