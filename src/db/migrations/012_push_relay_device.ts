import type { Knex } from 'knex';

/**
 * push_devices (migration 001) holds a device's E2EE registration as the
 * client sent it. The relay answers a forwarded registration with its own id
 * for the device, by which notifications address it; until that answer the
 * device is pending and gets no notification (as Zulip's server waits for its
 * bouncer's device id). A token rotation clears it until the relay confirms
 * the new token.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_devices', (t) => {
    t.bigInteger('relay_device_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_devices', (t) => {
    t.dropColumn('relay_device_id');
  });
}
