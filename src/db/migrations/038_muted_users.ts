import type { Knex } from 'knex';

/**
 * muted_users: the users each user muted (Zulip's MutedUser), with when.
 * One row per pair (`user_id` muted `muted_user_id`), as Zulip's
 * unique_together; the second index answers "who muted this sender", which
 * every send asks (through the per-node cache src/cache/muting-users.ts).
 * Either user's removal removes the row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('muted_users', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('muted_user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.bigInteger('date_muted').notNullable();
    t.unique(['user_id', 'muted_user_id'], { indexName: 'muted_users_user_muted' });
    t.index(['muted_user_id', 'user_id'], 'muted_users_muted_user');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('muted_users');
}
