import type { Knex } from 'knex';

/**
 * Lower-cased key columns compare exactly on MySQL/MariaDB too: under the
 * database's utf8mb4_unicode_ci they ignored accents and treated all emoji
 * as equal ('cafe' = 'café', '🎉' = '🚀'), so two channels could collide.
 * They are also twice as wide, because lower-casing can lengthen text
 * ('İ' becomes two code points). SQLite already compares them exactly and
 * does not enforce lengths.
 *
 * Plus an index for per-channel traffic over time (stream_weekly_traffic).
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'mysql2') {
    await knex.raw("ALTER TABLE messages MODIFY topic_key VARCHAR(120) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT ''");
    await knex.raw('ALTER TABLE channels MODIFY name_key VARCHAR(120) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL');
    await knex.raw('ALTER TABLE users MODIFY email_key VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL');
  }
  await knex.schema.alterTable('messages', (t) => t.index(['recipient_id', 'date_sent'], 'messages_recipient_date'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => t.dropIndex(['recipient_id', 'date_sent'], 'messages_recipient_date'));
  if (knex.client.config.client === 'mysql2') {
    await knex.raw("ALTER TABLE messages MODIFY topic_key VARCHAR(60) NOT NULL DEFAULT ''");
    await knex.raw('ALTER TABLE channels MODIFY name_key VARCHAR(60) NOT NULL');
    await knex.raw('ALTER TABLE users MODIFY email_key VARCHAR(254) NOT NULL');
  }
}
