import type { Knex } from 'knex';
import { insertOne } from './ids';
import { listRowsOfMessage } from './message-receivers';

type Q = Knex | Knex.Transaction;

export interface SubmessageRow {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}

/** Stores a submessage and marks its message as having some. */
export async function insertSubmessage(q: Q, row: Omit<SubmessageRow, 'id'>): Promise<number> {
  const id = await insertOne(q, 'submessages', row);
  await q('messages').where({ id: row.message_id }).update({ has_submessages: true });
  return id;
}

/** The submessages of these messages, oldest first. */
export async function listSubmessages(q: Q, messageIds: readonly number[]): Promise<SubmessageRow[]> {
  if (messageIds.length === 0) return [];
  return q('submessages').whereIn('message_id', messageIds).orderBy('id').select('id', 'message_id', 'sender_id', 'msg_type', 'content');
}

/** Whether this user attached any submessage to the message. */
export async function hasSubmessageFrom(q: Q, messageId: number, senderId: number): Promise<boolean> {
  return (await q('submessages').where({ message_id: messageId, sender_id: senderId }).first('id')) !== undefined;
}

/** How many submessages the message has, counted up to `limit` (the count stops there: a bounded read). */
export async function countSubmessagesUpTo(q: Q, messageId: number, limit: number): Promise<number> {
  const rows = await q('submessages').where({ message_id: messageId }).limit(limit).select('id');
  return rows.length;
}

/** The content of the message's first widget submessage (the widget's definition), if any. */
export async function getWidgetSubmessage(q: Q, messageId: number): Promise<string | undefined> {
  const row = await q('submessages').where({ message_id: messageId, msg_type: 'widget' }).orderBy('id').first('content');
  return row?.content;
}

/** Users holding a row for the message: who a submessage event goes to. */
export async function listMessageUserIds(q: Q, messageId: number): Promise<number[]> {
  return (await listRowsOfMessage(q, messageId)).map((r) => r.user_id);
}
