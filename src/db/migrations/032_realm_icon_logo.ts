import type { Knex } from 'knex';

/**
 * The organization's icon, wide logo and wide logo for dark themes (Zulip's
 * Realm.icon_source/icon_version, logo_source/logo_version and
 * night_logo_source/night_logo_version): a source letter — 'G' (the default,
 * Gravatar-made icon) or 'U' (uploaded) for the icon, 'D' (default) or 'U'
 * for the logos — and a version that goes up with every change, so each
 * upload gets a file name and URL of its own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realms', (t) => {
    t.string('icon_source', 1).notNullable().defaultTo('G');
    t.integer('icon_version').unsigned().notNullable().defaultTo(1);
    t.string('logo_source', 1).notNullable().defaultTo('D');
    t.integer('logo_version').unsigned().notNullable().defaultTo(1);
    t.string('night_logo_source', 1).notNullable().defaultTo('D');
    t.integer('night_logo_version').unsigned().notNullable().defaultTo(1);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realms', (t) => {
    t.dropColumn('icon_source');
    t.dropColumn('icon_version');
    t.dropColumn('logo_source');
    t.dropColumn('logo_version');
    t.dropColumn('night_logo_source');
    t.dropColumn('night_logo_version');
  });
}
