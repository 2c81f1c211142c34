import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { RecipientType } from '../domain/recipients';
import { rawRows } from './rows';

type Q = Knex | Knex.Transaction;

/**
 * What the retention archiver (src/actions/retention.ts) reads: which
 * conversations have a retention period, and which of their messages are
 * past it. Stored values: realms.message_retention_days NULL or -1 keeps
 * forever; channels.message_retention_days NULL inherits the organization's,
 * -1 keeps forever, a positive number is the channel's own.
 */

/** An organization whose direct messages expire: after `days`. */
export interface RealmRetention {
  realmId: number;
  days: number;
}

/** A channel whose messages expire: after `days` (its own, or its organization's when it inherits). */
export interface ChannelRetention {
  realmId: number;
  channelId: number;
  recipientId: number;
  days: number;
}

/** The columns the policy lists read. */
interface RealmRetentionRow {
  id: number;
  message_retention_days: number;
}
interface ChannelRetentionRow {
  id: number;
  realm_id: number;
  recipient_id: number;
  /** The channel's own period (NULL: it inherits). */
  own: number | null;
  /** Its organization's period. */
  inherited: number | null;
}

/** Every organization with a retention period (for direct messages), by id. */
export async function listRealmRetention(q: Q): Promise<RealmRetention[]> {
  const rows = await q('realms').where('message_retention_days', '>', 0).orderBy('id').select('id', 'message_retention_days');
  return rawRows<RealmRetentionRow>(rows).map((r) => ({ realmId: Number(r.id), days: Number(r.message_retention_days) }));
}

/**
 * Every channel whose messages expire: those with a period of their own, and
 * those inheriting an organization's period; never a channel set to -1.
 * Archived channels included (their messages age as any).
 */
export async function listChannelRetention(q: Q): Promise<ChannelRetention[]> {
  const rows = await q('channels as c')
    .join('realms as r', 'r.id', 'c.realm_id')
    .where('c.message_retention_days', '>', 0)
    .orWhere((b) => b.whereNull('c.message_retention_days').andWhere('r.message_retention_days', '>', 0))
    .orderBy('c.id')
    .select('c.id', 'c.realm_id', 'c.recipient_id', 'c.message_retention_days as own', 'r.message_retention_days as inherited');
  return rawRows<ChannelRetentionRow>(rows).map((r) => ({
    realmId: Number(r.realm_id),
    channelId: Number(r.id),
    recipientId: Number(r.recipient_id),
    days: Number(r.own ?? r.inherited),
  }));
}

/** An expired channel message, with its topic key. */
export interface ExpiredChannelMessage {
  id: number;
  topic_key: string;
}

/** An expired direct message, with its conversation. */
export interface ExpiredDirectMessage {
  id: number;
  recipient_id: number;
}

/** The oldest `limit` messages (`messages as m`) sent before `before` (UNIX seconds), oldest first. */
function oldestBefore(q: Q, before: number, limit: number): Knex.QueryBuilder {
  return q('messages as m')
    .where('m.date_sent', '<', before)
    .orderBy([{ column: 'm.date_sent' }, { column: 'm.id' }])
    .limit(limit);
}

/**
 * The channel's oldest `limit` messages sent before `before` (UNIX seconds),
 * oldest first, with their topic keys: read along the (recipient_id,
 * date_sent) index, and locked on MariaDB so that an edit or a deletion of
 * one of them waits for the batch.
 */
export async function listExpiredChannelMessages(
  q: Q,
  recipientId: number,
  before: number,
  limit: number,
): Promise<ExpiredChannelMessage[]> {
  const qb = oldestBefore(q, before, limit).where('m.recipient_id', recipientId).select('m.id', 'm.topic_key');
  if (dialectOf(q as Knex) === 'mysql') qb.forUpdate();
  return rawRows<ExpiredChannelMessage>(await qb).map((r) => ({ id: Number(r.id), topic_key: String(r.topic_key) }));
}

/**
 * The organization's oldest `limit` direct messages (one-to-one and group)
 * sent before `before`, oldest first, with their conversation: read along the
 * (realm_id, date_sent) index. Not locked: a locking read would lock the
 * recipients rows it joins too, holding up sends to those conversations;
 * archiveMessages' own statements lock the messages it moves, and move only
 * those still there.
 */
export async function listExpiredDirectMessages(q: Q, realmId: number, before: number, limit: number): Promise<ExpiredDirectMessage[]> {
  const qb = oldestBefore(q, before, limit)
    .join('recipients as r', 'r.id', 'm.recipient_id')
    .where('m.realm_id', realmId)
    .whereIn('r.type', [RecipientType.PERSONAL, RecipientType.DM_GROUP])
    .select('m.id', 'm.recipient_id');
  return rawRows<ExpiredDirectMessage>(await qb).map((r) => ({ id: Number(r.id), recipient_id: Number(r.recipient_id) }));
}
