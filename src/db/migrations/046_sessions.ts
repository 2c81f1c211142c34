import type { Knex } from 'knex';

/**
 * sessions: the browser sessions of the web client (docs/architecture/sessions.md,
 * ADR 0053). The cookie carries a random 32-byte key; only its SHA-256 is
 * stored, so the table alone logs no one in. Each session has its own
 * CSRF token (the page's script sends it back in X-CSRFToken). Times are
 * milliseconds since the epoch; `last_active_at` is written at most once a
 * minute per session.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sessions', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    // The key's SHA-256, hex: how a request's cookie finds its row.
    t.string('key_hash', 64).notNullable();
    t.string('csrf_token', 32).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_active_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    // Room for an IPv6 address with a zone.
    t.string('ip_address', 64).nullable();
    t.string('user_agent', 255).nullable();
    t.unique(['key_hash'], { indexName: 'sessions_key_hash' });
    t.index(['user_id'], 'sessions_user');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sessions');
}
