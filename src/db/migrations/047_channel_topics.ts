import type { Knex } from 'knex';

/**
 * channel_topics: one row per channel and topic (the lower-cased
 * `topic_key`, as messages.topic_key) with its newest message's id and that
 * message's spelling of the topic: what GET /users/me/{stream_id}/topics
 * lists for channels with shared history, read in order from the
 * (recipient_id, max_id) index instead of grouped from the channel's
 * messages (ADR 0055). Kept by the send, move, delete and restore
 * statements (src/queries/topic-summaries.ts). Only channels have rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('channel_topics', (t) => {
    t.integer('recipient_id').unsigned().notNullable().references('id').inTable('recipients').onDelete('CASCADE');
    t.string('topic_key', 120).notNullable();
    t.string('topic', 60).notNullable();
    t.integer('max_id').unsigned().notNullable();
    t.primary(['recipient_id', 'topic_key']);
    t.index(['recipient_id', 'max_id'], 'channel_topics_recipient_max');
  });
  if (knex.client.config.client === 'mysql2') {
    // Exact comparison, as messages.topic_key (migration 003).
    await knex.raw('ALTER TABLE channel_topics MODIFY topic_key VARCHAR(120) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL');
  }
  // Every channel topic there is, from the (recipient_id, topic_key, id) index.
  await knex.raw(
    `INSERT INTO channel_topics (recipient_id, topic_key, topic, max_id)
     SELECT m.recipient_id, m.topic_key, m.topic, m.id
     FROM messages m
     JOIN (SELECT mm.recipient_id, mm.topic_key, MAX(mm.id) AS max_id
           FROM messages mm JOIN recipients r ON r.id = mm.recipient_id
           WHERE r.type = 2
           GROUP BY mm.recipient_id, mm.topic_key) t ON m.id = t.max_id`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('channel_topics');
}
