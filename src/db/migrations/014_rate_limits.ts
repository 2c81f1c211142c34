import type { Knex } from 'knex';

/**
 * Rate-limit counters for RATE_LIMIT_STORE=database (src/db/rate-limit-store.ts):
 * one row per limited key (`user:<id>`, `ip:<address>`, `auth:<username>`),
 * in the layout rate-limiter-flexible's SQLite and MySQL stores read and
 * write: the points used in the current window and when it ends (ms since
 * the epoch). The stores insert positionally, so the column order matters.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rate_limits', (t) => {
    t.string('key', 255).notNullable().primary();
    t.integer('points').notNullable().defaultTo(0);
    t.bigInteger('expire').unsigned().nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('rate_limits');
}
