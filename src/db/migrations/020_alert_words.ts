import type { Knex } from 'knex';

/**
 * alert_words: the words a user wants to be alerted about (Zulip's
 * AlertWord). Stored as the user typed them; one per user ignoring case
 * (`word_key`, lower-cased), as Zulip compares them.
 *
 * realms.alert_word_count: how many the organization's users have, kept by
 * the actions that add and remove them; sending reads the realm row anyway,
 * so an organization without alert words pays nothing per message for them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('alert_words', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('word', 100).notNullable();
    t.string('word_key', 100).notNullable();
    t.unique(['user_id', 'word_key'], { indexName: 'alert_words_user_word' });
    t.index(['realm_id'], 'alert_words_realm');
  });
  await knex.schema.alterTable('realms', (t) => {
    t.integer('alert_word_count').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realms', (t) => {
    t.dropColumn('alert_word_count');
  });
  await knex.schema.dropTable('alert_words');
}
