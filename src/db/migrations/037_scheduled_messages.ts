import type { Knex } from 'knex';

/**
 * Scheduled messages and message reminders (Zulip's ScheduledMessage; src/actions/scheduled-messages.ts,
 * src/actions/scheduled-delivery.ts, docs/architecture/scheduled-delivery.md).
 *
 * One table holds both, told apart by `delivery_type` (1 send later, 2 a
 * reminder), as Zulip's does: the delivery scheduler reads one index for
 * both. The row is the durable record of the work: a message is due while
 * `delivered` and `failed` are false and `scheduled_timestamp` (seconds, as
 * the API's) has passed, and the scheduler sets `delivered` in the same
 * transaction as the send, so a crash leaves either both or neither.
 *
 * The recipient is kept as the request named it, not as a messages
 * recipient: `channel_id` for a channel message, `to_user_ids` (a JSON list,
 * the participants other than the sender, or the sender alone for a note to
 * self) for a direct one. The send at delivery time resolves and checks them
 * again, as Zulip's does.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  await knex.schema.createTable('scheduled_messages', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.integer('sender_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.smallint('delivery_type').notNullable().defaultTo(1);
    t.integer('channel_id').unsigned().nullable();
    t.text('to_user_ids').nullable();
    t.string('topic', 255).notNullable().defaultTo('');
    t.text('content', mysql ? 'mediumtext' : undefined).notNullable();
    t.text('rendered_content', mysql ? 'mediumtext' : undefined).notNullable();
    t.string('sending_client', 30).notNullable();
    t.boolean('read_by_sender').notNullable().defaultTo(false);
    if (mysql) t.bigInteger('scheduled_timestamp').notNullable();
    else t.integer('scheduled_timestamp').notNullable();
    t.boolean('delivered').notNullable().defaultTo(false);
    t.integer('delivered_message_id').unsigned().nullable();
    t.boolean('failed').notNullable().defaultTo(false);
    t.text('failure_message').nullable();
    t.integer('reminder_target_message_id').unsigned().nullable();
    t.text('reminder_note').nullable();
    // The scheduler's one query: the earliest pending rows.
    t.index(['delivered', 'failed', 'scheduled_timestamp'], 'scheduled_messages_pending');
    t.index(['sender_id', 'delivery_type'], 'scheduled_messages_sender');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('scheduled_messages');
}
