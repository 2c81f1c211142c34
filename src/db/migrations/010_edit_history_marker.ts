import type { Knex } from 'knex';

/**
 * Whether a message has edit-history entries. Fetching reads message_edits
 * only for messages that have some (most never do), and until now it guessed
 * from last_edit_time / last_moved_time; but resolving or unresolving a
 * topic sets neither (it is not a move, feature level 365) while it does
 * write an entry, so a resolved message lost its edit_history. Adding a
 * column with a constant default is instant on MariaDB 10.3+ and on SQLite.
 * Messages edited before this migration keep being found through the times.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.boolean('has_edit_history').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.dropColumn('has_edit_history');
  });
}
