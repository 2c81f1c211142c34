import type { Knex } from 'knex';

/**
 * Soft deactivation (ADR 0058): long-idle users get no user_messages rows
 * a send can leave out, and are caught up when they come back.
 * - users.last_visit_time: the last authenticated request (hourly), which
 *   picks who goes idle. Existing users start at the migration's time, so
 *   nobody goes idle before 28 observed days; new users start NULL.
 * - users.last_active_message_id: rows are decided up to this message
 *   while the user is idle (the catch-up's start, moved as it goes).
 * - subscriptions.is_user_long_term_idle: the user's bit, copied as
 *   is_user_active is, so a send reads it with the subscriber list.
 * - subscriptions.idle_keeps_rows: the subscription's effective channel
 *   push or email setting, frozen when the user went idle.
 * - subscriptions.idle_since_message_id: the newest message id when an
 *   idle user subscribed (NULL: subscribed before going idle).
 * - idle_subscription_spans: (from, to] of a channel an idle user left.
 * - soft_reactivations: the second catch-up pass, due after the commit
 *   margin, that finds sends which read the user as idle and committed late.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.bigInteger('last_visit_time').nullable();
    t.integer('last_active_message_id').unsigned().nullable();
  });
  await knex('users').update({ last_visit_time: Math.floor(Date.now() / 1000) });
  await knex.schema.alterTable('subscriptions', (t) => {
    t.boolean('is_user_long_term_idle').notNullable().defaultTo(false);
    t.boolean('idle_keeps_rows').notNullable().defaultTo(false);
    t.integer('idle_since_message_id').unsigned().nullable();
  });
  await knex.schema.createTable('idle_subscription_spans', (t) => {
    t.increments('id').primary();
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('recipient_id').unsigned().notNullable().references('id').inTable('recipients').onDelete('CASCADE');
    t.integer('from_message_id').unsigned().notNullable();
    t.integer('to_message_id').unsigned().notNullable();
    t.index(['user_id'], 'idle_subscription_spans_user');
  });
  await knex.schema.createTable('soft_reactivations', (t) => {
    t.integer('user_id').unsigned().notNullable().primary().references('id').inTable('users').onDelete('CASCADE');
    t.integer('from_message_id').unsigned().notNullable();
    t.bigInteger('due_time').notNullable();
    t.index(['due_time'], 'soft_reactivations_due');
  });
  // The daily job's scan: active humans by last visit.
  await knex.schema.alterTable('users', (t) => {
    t.index(['long_term_idle', 'last_visit_time'], 'users_idle_last_visit');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('soft_reactivations');
  await knex.schema.dropTable('idle_subscription_spans');
  await knex.schema.alterTable('subscriptions', (t) => {
    t.dropColumn('idle_since_message_id');
    t.dropColumn('idle_keeps_rows');
    t.dropColumn('is_user_long_term_idle');
  });
  await knex.schema.alterTable('users', (t) => {
    t.dropIndex(['long_term_idle', 'last_visit_time'], 'users_idle_last_visit');
    t.dropColumn('last_active_message_id');
    t.dropColumn('last_visit_time');
  });
}
