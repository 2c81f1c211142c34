import type { Knex } from 'knex';

/**
 * A linkifier's reverse-linkifier fields (Zulip's feature levels 471 and
 * 478): an example input, a reverse template, and alternative URL
 * templates. The first two are null when not set; the third is a JSON
 * array of strings, null for the empty list (a TEXT column has no portable
 * default), so the rows written before this migration need no update.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realm_linkifiers', (t) => {
    t.text('example_input').nullable();
    t.text('reverse_template').nullable();
    t.text('alternative_url_templates').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realm_linkifiers', (t) => {
    t.dropColumn('alternative_url_templates');
    t.dropColumn('reverse_template');
    t.dropColumn('example_input');
  });
}
