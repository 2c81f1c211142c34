import type { Knex } from 'knex';

/**
 * outgoing_emails: the mail queue (docs/architecture/email.md). An action
 * that sends mail renders it and inserts its row in the transaction that
 * decided to send it, so mail exists exactly when the change it tells of
 * committed; the delivery worker sends pending rows over SMTP (or to
 * DATA_DIR/emails/) after commit, with retries, and marks them sent.
 * The From address is the server's (NOREPLY_EMAIL_ADDRESS), added at send
 * time; `from_name` is the display name before it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outgoing_emails', (t) => {
    t.increments('id').unsigned().primary();
    // Null for mail no organization sends (the send-test-email command).
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
    t.integer('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('outgoing_emails');
}
