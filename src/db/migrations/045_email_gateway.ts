import type { Knex } from 'knex';

/**
 * The incoming email gateway (docs/architecture/email-gateway.md).
 *
 * - channel_email_addresses: a channel's email address, one per channel,
 *   creator and sender (Zulip's ChannelEmailAddress, feature level 335): the
 *   user who asked for it (GET /streams/{id}/email_address), who its mail
 *   is posted as (the organization's Email Gateway bot, the creator or one
 *   of the creator's bots) and the random token its address carries. Zulip
 *   allows a null creator for addresses older than the table; Parley has
 *   none, so the creator is required and the triple is unique.
 *   `deactivated` is kept as Zulip keeps it (an address can be retired
 *   without being forgotten); nothing sets it yet.
 * - missed_message_addresses: the Reply-To of a missed-message email
 *   (Zulip's MissedMessageEmailAddress): a reply to it is posted where the
 *   message was, as the user the mail was for. `times_used` counts replies.
 *   No foreign key to messages: a deleted or archived message's address
 *   simply stops resolving (the lookup joins the live message).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('channel_email_addresses', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.integer('channel_id').unsigned().notNullable().references('id').inTable('channels').onDelete('CASCADE');
    t.integer('creator_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('sender_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    // Zulip's token is 32 characters; an email address's local part may be 64.
    t.string('email_token', 32).notNullable();
    // Seconds since the epoch, 64-bit as every time (migration 007).
    t.bigInteger('created_at').notNullable();
    t.boolean('deactivated').notNullable().defaultTo(false);
    t.unique(['email_token'], { indexName: 'channel_email_addresses_token' });
    t.unique(['channel_id', 'creator_id', 'sender_id'], { indexName: 'channel_email_addresses_triple' });
  });
  await knex.schema.createTable('missed_message_addresses', (t) => {
    t.increments('id').unsigned().primary();
    // "mm" and 32 hexadecimal digits, as Zulip's.
    t.string('email_token', 34).notNullable();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('message_id').unsigned().notNullable();
    // Seconds since the epoch, 64-bit as every time (migration 007).
    t.bigInteger('created_at').notNullable();
    // Wide too: the schema check of test/data-model.test.ts takes any INT named like a time for one.
    t.bigInteger('times_used').unsigned().notNullable().defaultTo(0);
    t.unique(['email_token'], { indexName: 'missed_message_addresses_token' });
    t.index(['message_id'], 'missed_message_addresses_message');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('missed_message_addresses');
  await knex.schema.dropTable('channel_email_addresses');
}
