import type { Knex } from 'knex';

/**
 * active_push_notifications: the messages each user's phones were notified
 * of and still show (Zulip's active_mobile_push_notification flag, kept as
 * rows so that "which of these are shown" is an index lookup whatever the
 * size of the user's history). A row is written when a notification goes
 * to the relay and removed when the message is read or deleted, which sends
 * the phones a removal. No key to messages: a deleted message's row must
 * outlive it until its removal is sent (src/actions/push-relay.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('active_push_notifications', (t) => {
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('message_id').unsigned().notNullable();
    t.primary(['user_id', 'message_id']);
    t.index(['message_id'], 'active_push_notifications_message');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('active_push_notifications');
}
