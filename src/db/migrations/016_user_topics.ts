import type { Knex } from 'knex';

/**
 * user_topics: a user's visibility policy for one topic of a channel
 * (1 muted, 2 unmuted, 3 followed; "inherit" is the absence of a row), as
 * Zulip's UserTopic. Topics match case-insensitively, so a row is unique per
 * user, channel and lower-cased topic (`topic_key`, as messages.topic_key);
 * `topic` keeps the case the user last sent. `recipient_id` is the channel's,
 * so unread counts and narrows join on it as they do on messages.
 *
 * realms.enable_read_receipts: whether GET /messages/{id}/read_receipts
 * answers at all in the organization (on, as for Zulip's new organizations).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_topics', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('channel_id').unsigned().notNullable().references('id').inTable('channels').onDelete('CASCADE');
    t.integer('recipient_id').unsigned().notNullable().references('id').inTable('recipients').onDelete('CASCADE');
    t.string('topic', 60).notNullable();
    t.string('topic_key', 60).notNullable();
    t.tinyint('visibility_policy').notNullable();
    t.bigInteger('last_updated').notNullable();
    t.unique(['user_id', 'channel_id', 'topic_key'], { indexName: 'user_topics_user_channel_topic' });
    t.index(['channel_id', 'topic_key'], 'user_topics_channel_topic');
  });
  await knex.schema.alterTable('realms', (t) => {
    t.boolean('enable_read_receipts').notNullable().defaultTo(true);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realms', (t) => {
    t.dropColumn('enable_read_receipts');
  });
  await knex.schema.dropTable('user_topics');
}
