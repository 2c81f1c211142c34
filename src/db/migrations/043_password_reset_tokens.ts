import type { Knex } from 'knex';

/**
 * password_reset_tokens: the links of "forgot password" mails
 * (docs/architecture/password-reset.md). Only the token's SHA-256 is
 * stored: the database alone cannot give anyone a working link. A token
 * works once (`used_at`), until `expires_at`, and a password change by any
 * path marks every outstanding token of the user used, as a changed
 * password invalidates Django's reset tokens in Zulip.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('password_reset_tokens', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    // The token's SHA-256, hex: how a link finds its row.
    t.string('token_hash', 64).notNullable().unique('password_reset_tokens_hash');
    // Seconds since the epoch.
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    // Null until the link sets a password (or a password change elsewhere retires it).
    t.bigInteger('used_at').nullable();
    t.index(['user_id'], 'password_reset_tokens_user');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('password_reset_tokens');
}
