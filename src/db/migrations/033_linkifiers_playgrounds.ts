import type { Knex } from 'knex';

/**
 * An organization's linkifiers (Zulip's RealmFilter) and code playgrounds
 * (Zulip's RealmPlayground).
 *
 * A linkifier's pattern is unique in its organization, as Zulip's
 * unique_together (realm, pattern); a pattern has no length limit in Zulip
 * and a unique index over a long text column is not portable (MariaDB
 * indexes a prefix of a TEXT column only), so the index is over
 * `pattern_hash`, the SHA-256 of the pattern in hex. `order` decides which
 * linkifier wins where two match overlapping text; ties fall back to the id.
 *
 * A playground is unique by (realm, pygments_language, name), as in Zulip;
 * the language is at most 40 characters and the name is bounded by Parley
 * (200), so a plain unique index fits both engines.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('realm_linkifiers', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.text('pattern').notNullable();
    t.string('pattern_hash', 64).notNullable();
    t.text('url_template').notNullable();
    t.integer('order').notNullable().defaultTo(0);
    t.unique(['realm_id', 'pattern_hash'], { indexName: 'realm_linkifiers_realm_pattern' });
  });
  await knex.schema.createTable('realm_playgrounds', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('pygments_language', 40).notNullable();
    t.text('url_template').notNullable();
    t.unique(['realm_id', 'pygments_language', 'name'], { indexName: 'realm_playgrounds_realm_language_name' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('realm_playgrounds');
  await knex.schema.dropTable('realm_linkifiers');
}
