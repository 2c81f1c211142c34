import type { Knex } from 'knex';

/**
 * A custom profile field's `use_for_user_matching` (Zulip's feature level
 * 455): whether clients match users by the field's value in typeahead.
 * False for every field written before it, as Zulip's default.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('custom_profile_fields', (t) => {
    t.boolean('use_for_user_matching').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('custom_profile_fields', (t) => {
    t.dropColumn('use_for_user_matching');
  });
}
