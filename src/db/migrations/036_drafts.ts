import type { Knex } from 'knex';

/**
 * Drafts kept on the server (Zulip's Draft), so a user's clients share
 * what is being composed.
 *
 * Zulip stores a draft's recipient as a Recipient row; Parley stores what
 * the draft addresses as the client sent it once checked: `type` ('' for no
 * recipient yet, 'stream', 'private'), the channel for a channel draft, and
 * for a direct message draft the other users' IDs (sorted, comma-separated;
 * the user's own ID alone for a draft to themselves), which is the `to` that
 * Zulip's Draft.to_dict derives from the recipient. A draft never becomes a
 * message by itself, so it needs no conversation row.
 *
 * `last_edit_time` is in microseconds: Zulip keeps the client's timestamp
 * rounded to six decimals, lists drafts in that order, and shows whole
 * seconds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('drafts', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('type', 8).notNullable();
    t.integer('channel_id').unsigned().nullable();
    t.text('dm_user_ids').notNullable();
    t.string('topic', 60).notNullable();
    t.text('content').notNullable();
    t.bigInteger('last_edit_time').notNullable();
    t.index(['user_id', 'last_edit_time'], 'drafts_user_edit_time');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('drafts');
}
