import type { Knex } from 'knex';

/**
 * realm_domains: the domains whose addresses may join an organization that
 * restricts sign-ups to its domains (Zulip's RealmDomain). A domain is
 * stored lower-cased, at most 255 characters (Zulip's validate_domain), once
 * per organization.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('realm_domains', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.string('domain', 255).notNullable();
    t.boolean('allow_subdomains').notNullable().defaultTo(false);
    t.unique(['realm_id', 'domain'], { indexName: 'realm_domains_realm_domain' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('realm_domains');
}
