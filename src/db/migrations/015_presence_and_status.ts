import type { Knex } from 'knex';

/**
 * Presence and user status (Zulip's UserPresence, PresenceSequence and
 * UserStatus):
 * - user_presence: one row per user, written by POST /users/me/presence.
 *   Times are UNIX seconds; a null time was never reported (readers show the
 *   user's date_joined instead, as Zulip does). last_update_id orders the
 *   changes within the organization, so a client can fetch only the rows
 *   changed since its last fetch; (realm_id, last_update_id) serves that
 *   read, (realm_id, last_connected_time) the full one.
 * - presence_sequence: per organization, the last last_update_id handed out.
 *   Its row is the lock that serialises presence writes of one organization,
 *   so ids are committed in increasing order and an incremental fetch never
 *   skips a change that commits later with a smaller id.
 * - user_status: one row per user who ever set a status; empty strings
 *   mean unset.
 * - realms.presence_disabled: the organization does not share presence.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_presence', (t) => {
    t.integer('user_id').unsigned().primary().references('id').inTable('users').onDelete('CASCADE');
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.bigInteger('last_active_time').nullable();
    t.bigInteger('last_connected_time').nullable();
    t.bigInteger('last_update_id').notNullable();
    t.index(['realm_id', 'last_update_id'], 'user_presence_realm_update');
    t.index(['realm_id', 'last_connected_time'], 'user_presence_realm_connected');
  });
  await knex.schema.createTable('presence_sequence', (t) => {
    t.integer('realm_id').unsigned().primary().references('id').inTable('realms').onDelete('CASCADE');
    t.bigInteger('last_update_id').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('user_status', (t) => {
    t.integer('user_id').unsigned().primary().references('id').inTable('users').onDelete('CASCADE');
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.string('status_text', 255).notNullable().defaultTo('');
    t.string('emoji_name', 100).notNullable().defaultTo('');
    t.string('emoji_code', 100).notNullable().defaultTo('');
    t.string('reaction_type', 30).notNullable().defaultTo('unicode_emoji');
    t.bigInteger('timestamp').notNullable();
    t.index(['realm_id'], 'user_status_realm');
  });
  await knex.schema.alterTable('realms', (t) => {
    t.boolean('presence_disabled').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('realms', (t) => {
    t.dropColumn('presence_disabled');
  });
  await knex.schema.dropTable('user_status');
  await knex.schema.dropTable('presence_sequence');
  await knex.schema.dropTable('user_presence');
}
