import type { Knex } from 'knex';

/**
 * Message retention (src/actions/retention.ts, docs/adr/0032-message-retention.md).
 *
 * - archive_transactions: one row per batch that moved messages into the
 *   archive (Zulip's ArchiveTransaction): its organization, why (1 the
 *   retention policy, 2 someone deleting, as archived_messages.archive_type),
 *   when, and whether it was restored. A restore names a batch, or selects
 *   batches by organization, channel and time.
 * - archived_messages.archive_transaction_id: the batch a message left in.
 *   Messages archived before this migration have none (they stay restorable
 *   by id).
 * - leases: background work that only one process of a cluster may do at a
 *   time holds a named row with an expiry; a process that dies lets it lapse.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  const time = (t: Knex.CreateTableBuilder, name: string) => (mysql ? t.bigInteger(name) : t.integer(name));

  await knex.schema.createTable('archive_transactions', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable();
    t.smallint('type').notNullable();
    time(t, 'timestamp').notNullable();
    t.boolean('restored').notNullable().defaultTo(false);
    time(t, 'restored_at').nullable();
    t.index(['realm_id', 'type', 'timestamp'], 'archive_transactions_realm_type_time');
  });
  await knex.schema.alterTable('archived_messages', (t) => {
    t.integer('archive_transaction_id').unsigned().nullable();
    t.index(['archive_transaction_id'], 'archived_messages_transaction');
    t.index(['recipient_id'], 'archived_messages_recipient');
  });
  await knex.schema.createTable('leases', (t) => {
    t.string('name', 60).primary();
    t.string('holder', 200).notNullable();
    // Milliseconds: a lease is renewed often and lasts minutes.
    t.bigInteger('expires_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('leases');
  await knex.schema.alterTable('archived_messages', (t) => {
    t.dropIndex(['recipient_id'], 'archived_messages_recipient');
    t.dropIndex(['archive_transaction_id'], 'archived_messages_transaction');
    t.dropColumn('archive_transaction_id');
  });
  await knex.schema.dropTable('archive_transactions');
}
