import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { dialectOf } from '../db/connection';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** Zulip's ScheduledMessage.delivery_type: a message sent later, or a reminder about a message. */
export const DeliveryType = { SEND_LATER: 1, REMIND: 2 } as const;
export type DeliveryTypeValue = (typeof DeliveryType)[keyof typeof DeliveryType];

export interface ScheduledMessageRow {
  id: number;
  realm_id: number;
  sender_id: number;
  delivery_type: number;
  /** The channel of a channel message; null for a direct message. */
  channel_id: number | null;
  /** A direct message's participants other than the sender (the sender alone for a note to self). */
  to_user_ids: number[];
  topic: string;
  content: string;
  rendered_content: string;
  sending_client: string;
  read_by_sender: boolean;
  /** Seconds since the epoch, as the API's scheduled_delivery_timestamp. */
  scheduled_timestamp: number;
  delivered: boolean;
  delivered_message_id: number | null;
  failed: boolean;
  failure_message: string | null;
  reminder_target_message_id: number | null;
  reminder_note: string | null;
}

const COLUMNS = [
  'id',
  'realm_id',
  'sender_id',
  'delivery_type',
  'channel_id',
  'to_user_ids',
  'topic',
  'content',
  'rendered_content',
  'sending_client',
  'read_by_sender',
  'scheduled_timestamp',
  'delivered',
  'delivered_message_id',
  'failed',
  'failure_message',
  'reminder_target_message_id',
  'reminder_note',
] as const;

const nullableNumber = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const toRow = (r: Pick<TableRow<'scheduled_messages'>, (typeof COLUMNS)[number]>): ScheduledMessageRow => ({
  id: Number(r.id),
  realm_id: Number(r.realm_id),
  sender_id: Number(r.sender_id),
  delivery_type: Number(r.delivery_type),
  channel_id: nullableNumber(r.channel_id),
  to_user_ids: r.to_user_ids ? (JSON.parse(String(r.to_user_ids)) as number[]) : [],
  topic: String(r.topic),
  content: String(r.content),
  rendered_content: String(r.rendered_content),
  sending_client: String(r.sending_client),
  read_by_sender: Boolean(r.read_by_sender),
  scheduled_timestamp: Number(r.scheduled_timestamp),
  delivered: Boolean(r.delivered),
  delivered_message_id: nullableNumber(r.delivered_message_id),
  failed: Boolean(r.failed),
  failure_message: r.failure_message === null ? null : String(r.failure_message),
  reminder_target_message_id: nullableNumber(r.reminder_target_message_id),
  reminder_note: r.reminder_note === null ? null : String(r.reminder_note),
});

export type NewScheduledMessage = Omit<ScheduledMessageRow, 'id' | 'delivered' | 'delivered_message_id' | 'failed' | 'failure_message'>;

export async function insertScheduledMessage(q: Q, row: NewScheduledMessage): Promise<ScheduledMessageRow> {
  const id = await insertOne(q, 'scheduled_messages', {
    ...row,
    to_user_ids: row.channel_id === null ? JSON.stringify(row.to_user_ids) : null,
  });
  return { ...row, id, delivered: false, delivered_message_id: null, failed: false, failure_message: null };
}

/** The user's undelivered items of one kind (failed ones included, as Zulip lists them), by delivery time. */
export async function listUndelivered(q: Q, senderId: number, deliveryTypes: readonly DeliveryTypeValue[]): Promise<ScheduledMessageRow[]> {
  const rows = await q('scheduled_messages')
    .where({ sender_id: senderId, delivered: false })
    .whereIn('delivery_type', deliveryTypes)
    .orderBy([{ column: 'scheduled_timestamp' }, { column: 'id' }])
    .select(...COLUMNS);
  return rows.map(toRow);
}

/** The user's own item of this kind, locked for the transaction (a delivery waits on it); undefined for another user's or a missing one. */
export async function findOwnScheduledForUpdate(
  q: Q,
  senderId: number,
  id: number,
  deliveryType: DeliveryTypeValue,
): Promise<ScheduledMessageRow | undefined> {
  const query = q('scheduled_messages')
    .where({ id, sender_id: senderId, delivery_type: deliveryType })
    .first(...COLUMNS);
  // SQLite has no row locks (its writer holds the database); knex warns on forUpdate there.
  if (dialectOf(q) === 'mysql') query.forUpdate();
  const row = await query;
  return row ? toRow(row) : undefined;
}

export async function updateScheduledMessage(
  q: Q,
  id: number,
  changes: Partial<Omit<ScheduledMessageRow, 'id' | 'to_user_ids'>> & { to_user_ids?: number[] },
): Promise<void> {
  const { to_user_ids, ...rest } = changes;
  await q('scheduled_messages')
    .where({ id })
    .update({
      ...rest,
      ...(to_user_ids === undefined ? {} : { to_user_ids: rest.channel_id === null ? JSON.stringify(to_user_ids) : null }),
    });
}

export async function deleteScheduledMessage(q: Q, id: number): Promise<void> {
  await q('scheduled_messages').where({ id }).delete();
}

/** Pending items due at `nowSeconds`, earliest first: ids and organizations. */
export async function listDue(q: Q, nowSeconds: number, limit: number): Promise<Array<{ id: number; realmId: number }>> {
  const rows: Array<{ id: number; realm_id: number }> = await q('scheduled_messages')
    .where({ delivered: false, failed: false })
    .andWhere('scheduled_timestamp', '<=', nowSeconds)
    .orderBy([{ column: 'scheduled_timestamp' }, { column: 'id' }])
    .limit(limit)
    .select('id', 'realm_id');
  return rows.map((r) => ({ id: Number(r.id), realmId: Number(r.realm_id) }));
}

/**
 * The item, locked for the transaction, if it is still pending: the claim of a
 * delivery. The caller marks it delivered in the same transaction as the
 * send, so a second claimer (another node, or this one after a crash) finds
 * it delivered, or waits on the lock and then does.
 */
export async function claimPending(q: Q, id: number): Promise<ScheduledMessageRow | undefined> {
  const query = q('scheduled_messages')
    .where({ id, delivered: false, failed: false })
    .first(...COLUMNS);
  if (dialectOf(q) === 'mysql') query.forUpdate();
  const row = await query;
  return row ? toRow(row) : undefined;
}

export async function markDelivered(q: Q, id: number, messageId: number | null): Promise<void> {
  await q('scheduled_messages').where({ id }).update({ delivered: true, delivered_message_id: messageId });
}

export async function markFailed(q: Q, id: number, failureMessage: string): Promise<void> {
  await q('scheduled_messages').where({ id }).update({ failed: true, failure_message: failureMessage });
}

/** The earliest pending delivery time (seconds), or null when nothing is pending. */
export async function nextDueTimestamp(q: Q): Promise<number | null> {
  const row = (await q('scheduled_messages').where({ delivered: false, failed: false }).min('scheduled_timestamp as t').first()) as
    { t: number | string | null } | undefined;
  return row?.t === null || row?.t === undefined ? null : Number(row.t);
}
