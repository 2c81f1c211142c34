import type { Knex } from 'knex';

/**
 * Invitations by email (Zulip's PreregistrationUser with its INVITATION
 * Confirmation): one row per invited address, with who invited, the role,
 * the channels and groups the new account gets, the link's key and expiry,
 * and its status (0 usable, 1 used, 2 revoked; Zulip's STATUS_USED and
 * STATUS_REVOKED). `invitations_sent` counts the mail sent per organization
 * (first sends and resends alike, as Zulip's invites_sent::day statistic
 * does), which the daily invitation limit reads (docs/architecture/invitations.md).
 * A row with `multiuse_invite_id` is not an invitation but the confirmation
 * of an address given on a reusable link's page (Zulip's PreregistrationUser
 * made from a MultiuseInvite): listed nowhere, counted in no limit.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_invites', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.integer('referred_by_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('email', 254).notNullable();
    t.smallint('invited_as').notNullable().defaultTo(400);
    // Seconds since the epoch; expires_at NULL = never expires.
    t.bigInteger('invited_at').notNullable();
    t.bigInteger('expires_at').nullable();
    t.smallint('status').notNullable().defaultTo(0);
    t.boolean('notify_referrer_on_join').notNullable().defaultTo(true);
    t.boolean('include_realm_default_subscriptions').notNullable().defaultTo(false);
    t.text('welcome_message_custom_text').nullable();
    // The secret of the mail's link (/accounts/do_confirm/<key>).
    t.string('confirmation_key', 40).notNullable().unique();
    t.integer('created_user_id').unsigned().nullable().references('id').inTable('users').onDelete('SET NULL');
    // Set when the row confirms an address given on a reusable link's page: the account is made
    // from the link (its use counted) once the person opens the mailed link.
    t.integer('multiuse_invite_id').unsigned().nullable().references('id').inTable('multiuse_invites').onDelete('CASCADE');
    t.index(['realm_id', 'status']);
  });
  await knex.schema.createTable('email_invite_channels', (t) => {
    t.integer('invite_id').unsigned().notNullable().references('id').inTable('email_invites').onDelete('CASCADE');
    t.integer('channel_id').unsigned().notNullable().references('id').inTable('channels').onDelete('CASCADE');
    t.primary(['invite_id', 'channel_id']);
  });
  await knex.schema.createTable('email_invite_groups', (t) => {
    t.integer('invite_id').unsigned().notNullable().references('id').inTable('email_invites').onDelete('CASCADE');
    t.integer('group_id').unsigned().notNullable().references('id').inTable('user_groups').onDelete('CASCADE');
    t.primary(['invite_id', 'group_id']);
  });
  await knex.schema.createTable('invitations_sent', (t) => {
    t.increments('id').unsigned().primary();
    t.integer('realm_id').unsigned().notNullable().references('id').inTable('realms').onDelete('CASCADE');
    t.bigInteger('sent_at').notNullable();
    t.integer('count').notNullable();
    t.index(['realm_id', 'sent_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('invitations_sent');
  await knex.schema.dropTable('email_invite_groups');
  await knex.schema.dropTable('email_invite_channels');
  await knex.schema.dropTable('email_invites');
}
