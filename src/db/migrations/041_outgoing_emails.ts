import type { Knex } from 'knex';

/**
 * outgoing_emails: the mail queue (docs/architecture/email.md,
 * docs/adr/0048-the-mail-queue.md). An action that sends mail renders it
 * and inserts its row in the transaction that decided to send it, so mail
 * exists exactly when the change it tells of committed; the delivery worker
 * (src/actions/email-delivery.ts) sends pending rows over SMTP (or to
 * DATA_DIR/emails/) after commit, with retries, and marks them sent.
 * The From address is the server's (NOREPLY_EMAIL_ADDRESS), added at send
 * time; `from_name` is the display name before it.
 *
 * Delivery state: `state` is pending (0), sending (1: an attempt claimed the
 * row and committed that claim before talking to the SMTP server), sent (2)
 * or failed (3, with the server's answer in `last_error`). A row left in
 * sending by a process that stopped mid-attempt is never sent again (the
 * server may have accepted it): it becomes failed once its claim is older
 * than an attempt can last.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  // Times are 64-bit on MariaDB, as every time column is (past 2038; milliseconds besides).
  const time = (t: Knex.CreateTableBuilder, name: string) => (mysql ? t.bigInteger(name) : t.integer(name));
  await knex.schema.createTable('outgoing_emails', (t) => {
    t.increments('id').unsigned().primary();
    // Null for mail no organization sends.
    t.integer('realm_id').unsigned().nullable().references('id').inTable('realms').onDelete('CASCADE');
    // What kind of mail (the template's name): logs, metrics, tests.
    t.string('template', 60).notNullable();
    t.string('to_address', 254).notNullable();
    t.string('from_name', 200).notNullable();
    t.string('reply_to', 254).nullable();
    t.string('subject', 998).notNullable();
    t.text('text_body', 'mediumtext').notNullable();
    t.text('html_body', 'mediumtext').notNullable();
    // Seconds since the epoch.
    time(t, 'created_at').notNullable();
    // The Message-ID header's left part, fixed when the mail is queued: every attempt sends the
    // same Message-ID (<token@NOREPLY_EMAIL_ADDRESS's domain>), so a receiver can tell a repeat.
    t.string('message_token', 64).notNullable();
    t.smallint('state').notNullable().defaultTo(0);
    // Attempts claimed so far (the one in flight included).
    t.integer('attempts').notNullable().defaultTo(0);
    // Milliseconds since the epoch: when the next attempt may start (the queue time, then each
    // retry's backoff, which starts under a second in tests).
    time(t, 'next_attempt_at').notNullable();
    // The attempt in flight (state sending): when it was claimed (milliseconds) and by which process.
    time(t, 'claimed_at').nullable();
    t.string('claimed_by', 200).nullable();
    // Seconds since the epoch.
    time(t, 'sent_at').nullable();
    // The last attempt's failure: the SMTP server's answer, or the connection's error.
    t.string('last_error', 1000).nullable();
    // The worker's two questions: what is due (pending by time), and which claims are stale.
    t.index(['state', 'next_attempt_at'], 'outgoing_emails_state_due');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('outgoing_emails');
}
