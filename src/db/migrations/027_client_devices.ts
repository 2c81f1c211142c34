import type { Knex } from 'knex';

/**
 * The device registry (Zulip's feature levels 468 and 470): a logged-in
 * device is a row of `client_devices`, created by POST /register_client_device,
 * which hands out its id, and deleted by POST /remove_client_device. A
 * device's end-to-end encrypted push registration (POST /mobile_push/register)
 * lives on the same row, as Zulip keeps it on its Device, so removing a
 * device removes its registration with it.
 *
 * push_devices (migration 001) held registrations under ids the clients chose
 * themselves, before a device had to be registered first; none of those ids
 * names a device of the registry, so none can be carried over (Zulip likewise
 * dropped its earlier registrations at level 468): the apps register their
 * device again at their next start.
 *
 * Besides the registration as the client sent it, a row keeps what POST
 * /register's `devices` reports: the token the relay confirmed
 * (`confirmed_token_id`, Zulip's push_token_id), the token sent to the relay
 * and not confirmed yet (`pending_token_id`), when a token was last sent
 * (`token_updated_at`), and the relay's refusal of the pending one, if any
 * (`registration_error`, a Zulip error code).
 */
/** The columns of a registration as the client sends it, and the relay's id for the device: both tables have them. */
function registrationColumns(t: Knex.CreateTableBuilder): void {
  t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
  t.bigInteger('date_created').notNullable();
  t.bigInteger('push_key_id').nullable();
  t.text('push_key').nullable();
  t.string('token_kind', 10).nullable();
  t.string('token_id', 64).nullable();
  t.text('bouncer_public_key').nullable();
  t.text('encrypted_push_registration').nullable();
  t.bigInteger('relay_device_id').nullable();
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('client_devices', (t) => {
    t.increments('id').unsigned().primary();
    registrationColumns(t);
    t.string('confirmed_token_id', 64).nullable();
    t.string('pending_token_id', 64).nullable();
    t.bigInteger('token_updated_at').nullable();
    t.string('registration_error', 100).nullable();
    t.index(['user_id'], 'client_devices_user_id');
  });
  await knex.schema.dropTable('push_devices');
}

export async function down(knex: Knex): Promise<void> {
  // As migrations 001, 007 and 012 left it; the registrations are not carried back.
  await knex.schema.createTable('push_devices', (t) => {
    t.increments('id').unsigned().primary();
    registrationColumns(t);
    t.bigInteger('device_id').notNullable();
    t.unique(['user_id', 'device_id']);
  });
  await knex.schema.dropTable('client_devices');
}
