import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Legacy push tokens (push_tokens) may be up to 4,096 characters, as Zulip
 * accepts them, but migration 001 made the column VARCHAR(255) with a unique
 * key over (user_id, kind, token): MariaDB would refuse a longer token, and
 * cannot index 4,096 utf8mb4 characters anyway. Uniqueness moves to
 * token_key, the SHA-256 of the token in hex (src/queries/push-tokens.ts
 * computes it on every insert); on MariaDB the column widens to VARCHAR(4096).
 * SQLite does not enforce VARCHAR lengths, so its column stays as it is.
 */
const OLD_UNIQUE = ['user_id', 'kind', 'token'];
const NEW_UNIQUE = ['user_id', 'kind', 'token_key'];
const NEW_UNIQUE_NAME = 'push_tokens_user_kind_token_key';

const isMysql = (knex: Knex) => knex.client.config.client === 'mysql2';
const keyOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_tokens', (t) => {
    // The default only fills the rows already there, until the loop below.
    t.string('token_key', 64).notNullable().defaultTo('');
  });
  // No endpoint wrote this table before this migration, so it holds at most a
  // few rows from fixtures: one UPDATE each is fine.
  const rows = (await knex('push_tokens').select('id', 'token')) as Array<{ id: number; token: string }>;
  for (const row of rows)
    await knex('push_tokens')
      .where({ id: row.id })
      .update({ token_key: keyOf(row.token) });
  // The new key first: on MariaDB the old one also serves the user_id foreign
  // key, which refuses to lose its only index.
  await knex.schema.alterTable('push_tokens', (t) => t.unique(NEW_UNIQUE, { indexName: NEW_UNIQUE_NAME }));
  await knex.schema.alterTable('push_tokens', (t) => t.dropUnique(OLD_UNIQUE));
  if (isMysql(knex)) await knex.raw('ALTER TABLE `push_tokens` MODIFY `token` VARCHAR(4096) NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  // Refuses (on MariaDB) when a token longer than 255 characters is stored, rightly.
  if (isMysql(knex)) await knex.raw('ALTER TABLE `push_tokens` MODIFY `token` VARCHAR(255) NOT NULL');
  await knex.schema.alterTable('push_tokens', (t) => t.unique(OLD_UNIQUE));
  await knex.schema.alterTable('push_tokens', (t) => t.dropUnique(NEW_UNIQUE, NEW_UNIQUE_NAME));
  await knex.schema.alterTable('push_tokens', (t) => {
    t.dropColumn('token_key');
  });
}
