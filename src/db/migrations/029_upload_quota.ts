import type { Knex } from 'knex';

/**
 * realms.upload_quota_mib: the organization's upload quota in MiB, NULL for
 * none (Zulip's Realm.custom_upload_quota_gb, which a self-hosted server's
 * operator sets; Parley counts in MiB, as register's realm_upload_quota_mib).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realms', (t) => {
    t.integer('upload_quota_mib').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realms', (t) => {
    t.dropColumn('upload_quota_mib');
  });
}
