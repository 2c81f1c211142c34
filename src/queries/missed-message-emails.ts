import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { insertRows } from './ids';

type Q = Knex | Knex.Transaction;

/**
 * The messages waiting to be mailed to users who were away (migration 044,
 * src/actions/missed-message-emails.ts). Every pending row of a user carries
 * the due time of the user's batch.
 */

export interface PendingMissedMessage {
  id: number;
  user_id: number;
  message_id: number;
  trigger: string;
  mentioned_user_group_id: number | null;
  scheduled_timestamp: number;
}

export interface NewMissedMessage {
  userId: number;
  messageId: number;
  trigger: string;
  mentionedUserGroupId: number | null;
  /** The user's batching period (email_notifications_batching_period_seconds). */
  batchingPeriodSeconds: number;
}

/**
 * Stores missed messages for mail. A user with rows pending already joins
 * their batch (its due time), as Zulip's ScheduledMessageNotificationEmail
 * does; otherwise the batch starts now and is due after the user's period.
 * A message already pending for the user stays as it is.
 */
export async function addMissedMessages(q: Q, rows: readonly NewMissedMessage[], now: number): Promise<void> {
  if (rows.length === 0) return;
  const userIds = [...new Set(rows.map((r) => r.userId))];
  const batches = (await q('missed_message_emails')
    .whereIn('user_id', userIds)
    .groupBy('user_id')
    .select('user_id', q.raw('MIN(scheduled_timestamp) as due'))) as Array<{ user_id: number; due: number | string }>;
  const dueOf = new Map(batches.map((b) => [Number(b.user_id), Number(b.due)]));
  await insertRows(
    q,
    'missed_message_emails',
    rows.map((r) => ({
      user_id: r.userId,
      message_id: r.messageId,
      trigger: r.trigger,
      mentioned_user_group_id: r.mentionedUserGroupId,
      scheduled_timestamp: dueOf.get(r.userId) ?? now + r.batchingPeriodSeconds,
    })),
    ['user_id', 'message_id'],
  );
}

/** Users with a batch due at `now` (seconds), most overdue first. */
export async function listUsersDue(q: Q, now: number, limit: number): Promise<number[]> {
  const rows = (await q('missed_message_emails')
    .where('scheduled_timestamp', '<=', now)
    .groupBy('user_id')
    .orderByRaw('MIN(scheduled_timestamp)')
    .limit(limit)
    .select('user_id')) as Array<{ user_id: number }>;
  return rows.map((r) => Number(r.user_id));
}

/** The earliest due time of any batch, or null when nothing is pending. */
export async function nextMissedMessageDue(q: Q): Promise<number | null> {
  const row = (await q('missed_message_emails').min('scheduled_timestamp as due').first()) as { due: number | string | null } | undefined;
  return row?.due == null ? null : Number(row.due);
}

/**
 * The user's due rows, locked (MariaDB) until the transaction that mails
 * them deletes them: a second worker reading them meanwhile waits, then
 * finds none.
 */
export async function lockDueMissedMessages(q: Q, userId: number, now: number): Promise<PendingMissedMessage[]> {
  const query = q('missed_message_emails').where('user_id', userId).where('scheduled_timestamp', '<=', now).orderBy('message_id');
  if (dialectOf(q as Knex) === 'mysql') void query.forUpdate();
  const rows = (await query.select('*')) as PendingMissedMessage[];
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    message_id: Number(r.message_id),
    mentioned_user_group_id: r.mentioned_user_group_id === null ? null : Number(r.mentioned_user_group_id),
  }));
}

export async function deleteMissedMessages(q: Q, ids: readonly number[]): Promise<void> {
  if (ids.length > 0) await q('missed_message_emails').whereIn('id', ids).delete();
}

/** A user's one-click unsubscribe secret for `kind`, if one was made. */
export async function getUnsubscribeToken(q: Q, userId: number, kind: string): Promise<string | null> {
  const row = (await q('unsubscribe_tokens').where({ user_id: userId, kind }).first('token')) as { token: string } | undefined;
  return row?.token ?? null;
}

/** Stores a user's secret for `kind`; a concurrent one stored first wins (read it again after). */
export async function insertUnsubscribeToken(q: Q, userId: number, kind: string, token: string, now: number): Promise<void> {
  await insertRows(q, 'unsubscribe_tokens', [{ token, user_id: userId, kind, created_at: now }], ['user_id', 'kind']);
}

/** Whose secret `token` is, and for which kind of mail. */
export async function findUnsubscribeToken(q: Q, token: string): Promise<{ userId: number; kind: string } | null> {
  const row = (await q('unsubscribe_tokens').where({ token }).first('user_id', 'kind')) as { user_id: number; kind: string } | undefined;
  return row ? { userId: Number(row.user_id), kind: row.kind } : null;
}

/**
 * Users who may be mailed channel messages that do not mention them: channel
 * email notifications on in their settings (stored as JSON, written by
 * JSON.stringify), a subscription asking for mail, or a followed topic. A
 * superset: the decision reads the settings themselves.
 */
export async function listChannelEmailCandidates(q: Q): Promise<number[]> {
  const rows = (await q('users')
    .where('is_active', true)
    .where('is_bot', false)
    .where((w) =>
      w
        .where('settings', 'like', '%"enable_stream_email_notifications":true%')
        .orWhereIn('id', q('subscriptions').where({ email_notifications: true, active: true }).select('user_id'))
        .orWhereIn('id', q('user_topics').where('visibility_policy', 3).select('user_id')),
    )
    .select('id')) as Array<{ id: number }>;
  return rows.map((r) => Number(r.id));
}

/** Active accounts of this address in active organizations (realm_name_in_email_notifications_policy "automatic"). */
export async function countActiveAccountsOfAddress(q: Q, deliveryEmail: string): Promise<number> {
  const row = (await q('users as u')
    .join('realms as r', 'r.id', 'u.realm_id')
    .where('u.email_key', deliveryEmail.toLowerCase())
    .where({ 'u.is_active': true, 'u.is_bot': false, 'r.deactivated': false })
    .count('* as n')
    .first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** The names of these groups, smallest first (by direct members). */
export async function listGroupNamesBySize(q: Q, groupIds: readonly number[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const rows = (await q('user_groups as g')
    .leftJoin('group_members as m', 'm.group_id', 'g.id')
    .whereIn('g.id', groupIds)
    .whereNotNull('g.name')
    .groupBy('g.id', 'g.name')
    .orderByRaw('COUNT(m.user_id), g.id')
    .select('g.name')) as Array<{ name: string }>;
  return rows.map((r) => r.name);
}
