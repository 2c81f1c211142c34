import type { Knex } from 'knex';

/**
 * cache_invalidations: what a process without the server's memory (the
 * admin CLI, `cache flush`) changed, for running servers to drop from their
 * caches (src/cache/remote.ts reads it every CACHE_POLL_MS). A row holds one
 * invalidation as JSON; rows older than an hour are deleted by the writers.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('cache_invalidations', (t) => {
    t.increments('id').unsigned().primary();
    t.bigInteger('created_at').notNullable();
    t.text('payload').notNullable();
    t.index(['created_at'], 'cache_invalidations_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('cache_invalidations');
}
