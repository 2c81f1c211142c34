import type { Knex } from 'knex';

/**
 * Authentication looks an account up by its API key (as Zulip does): an
 * index lookup on a random 32-character key, instead of matching the email
 * against every account of the organization (the address alone is not
 * indexed across organizations, and the API email is a different column).
 * Keys are unique and, on MySQL/MariaDB, compared exactly (utf8mb4_bin): under
 * the database's case-insensitive collation 'abc…' would find 'ABC…'.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'mysql2') {
    await knex.raw('ALTER TABLE users MODIFY api_key VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL');
  }
  await knex.schema.alterTable('users', (t) => t.unique(['api_key'], { indexName: 'users_api_key' }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => t.dropUnique(['api_key'], 'users_api_key'));
  if (knex.client.config.client === 'mysql2') {
    await knex.raw('ALTER TABLE users MODIFY api_key VARCHAR(32) NOT NULL');
  }
}
