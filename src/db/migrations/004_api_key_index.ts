import type { Knex } from 'knex';

/**
 * Authentication looks an account up by its API key (as Zulip does): an
 * index lookup on a random 32-character key, instead of matching the email
 * against every account of the organization (the address alone is not
 * indexed across organizations, and the API email is a different column).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => t.index(['api_key'], 'users_api_key'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => t.dropIndex(['api_key'], 'users_api_key'));
}
