import type { Knex } from 'knex';

/**
 * users.awaiting_first_login: the account was made for the user (POST
 * /users) and they have not logged in yet. Zulip marks such accounts with
 * tos_version "-1" (TOS_VERSION_BEFORE_FIRST_LOGIN) and, from feature level
 * 475, moves their date_joined to the time of the first login; Parley keeps
 * no terms-of-service version, so it needs a mark of its own. Existing
 * accounts get none: whether they have logged in is not known.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.boolean('awaiting_first_login').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('awaiting_first_login');
  });
}
