import type { Knex } from 'knex';

/**
 * Full-text search over messages: MySQL/MariaDB FULLTEXT on (topic,
 * content); SQLite an external-content FTS5 table kept in step with
 * `messages` by triggers. One query function reads either
 * (src/queries/narrow.ts), so LIKE scans never happen.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'mysql2') {
    await knex.raw('ALTER TABLE messages ADD FULLTEXT INDEX messages_fulltext (topic, content)');
    return;
  }
  await knex.raw(
    `CREATE VIRTUAL TABLE messages_fts USING fts5(topic, content, content='messages', content_rowid='id',
       tokenize='unicode61 remove_diacritics 2')`,
  );
  await knex.raw(`CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
      INSERT INTO messages_fts(rowid, topic, content) VALUES (new.id, new.topic, new.content);
    END`);
  await knex.raw(`CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, topic, content) VALUES ('delete', old.id, old.topic, old.content);
    END`);
  await knex.raw(`CREATE TRIGGER messages_fts_update AFTER UPDATE OF topic, content ON messages BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, topic, content) VALUES ('delete', old.id, old.topic, old.content);
      INSERT INTO messages_fts(rowid, topic, content) VALUES (new.id, new.topic, new.content);
    END`);
  await knex.raw(`INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`);
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'mysql2') {
    await knex.raw('ALTER TABLE messages DROP INDEX messages_fulltext');
    return;
  }
  for (const t of ['messages_fts_insert', 'messages_fts_delete', 'messages_fts_update']) await knex.raw(`DROP TRIGGER IF EXISTS ${t}`);
  await knex.raw('DROP TABLE IF EXISTS messages_fts');
}
