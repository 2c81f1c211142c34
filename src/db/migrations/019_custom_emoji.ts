import type { Knex } from 'knex';

/**
 * realm_emoji.is_animated: an uploaded animated GIF keeps its animation and
 * gets a still PNG beside it (the still_url clients show when animation is
 * off), as Zulip's RealmEmoji.is_animated.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realm_emoji', (t) => {
    t.boolean('is_animated').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realm_emoji', (t) => {
    t.dropColumn('is_animated');
  });
}
