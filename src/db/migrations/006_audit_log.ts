import type { Knex } from 'knex';

/**
 * The command line reads a user's audit rows (`audit-log --user`): the rows
 * about them and the rows they made. Migration 001 indexed only
 * (realm_id, event_time), which would scan the organization's whole log.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audit_log', (t) => {
    t.index(['realm_id', 'modified_user_id'], 'audit_log_realm_modified_user');
    t.index(['realm_id', 'acting_user_id'], 'audit_log_realm_acting_user');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audit_log', (t) => {
    t.dropIndex(['realm_id', 'modified_user_id'], 'audit_log_realm_modified_user');
    t.dropIndex(['realm_id', 'acting_user_id'], 'audit_log_realm_acting_user');
  });
}
