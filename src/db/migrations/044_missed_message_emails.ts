import type { Knex } from 'knex';

/**
 * missed_message_emails: the messages waiting to be mailed to a user who was
 * away when they arrived (Zulip's ScheduledMessageNotificationEmail;
 * docs/architecture/missed-message-emails.md). A row is written after the
 * message's commit, off the send path, for each receiver whose settings ask
 * for mail and who was offline; every row of a user carries the due time of
 * the user's batch (the first pending row's arrival plus the user's
 * email_notifications_batching_period_seconds). The worker mails each due
 * user's rows, grouped per conversation, and deletes them in the
 * transaction that queues the mail. No key to messages: a message deleted
 * meanwhile has no user_messages row any more, which the worker reads as
 * "nothing to mail".
 *
 * unsubscribe_tokens: the secret of each user's one-click unsubscribe link
 * per kind of mail (missed_messages, digest, login, marketing); made the
 * first time a mail carries it, then reused, and valid until the user is
 * deleted (as Zulip's unsubscribe confirmations never expire).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('missed_message_emails', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('message_id').unsigned().notNullable();
    // Zulip's NotificationTriggers value: why this message is mailed (the subject and the wording follow it).
    t.string('trigger', 60).notNullable();
    // The group whose mention caused it (the smallest, when several name the user); null otherwise.
    t.integer('mentioned_user_group_id').unsigned().nullable();
    // Seconds since the epoch: when the user's batch is mailed.
    t.bigInteger('scheduled_timestamp').notNullable();
    t.unique(['user_id', 'message_id']);
    t.index(['scheduled_timestamp'], 'missed_message_emails_due');
  });
  await knex.schema.createTable('unsubscribe_tokens', (t) => {
    t.string('token', 64).primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('kind', 30).notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['user_id', 'kind']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('unsubscribe_tokens');
  await knex.schema.dropTable('missed_message_emails');
}
