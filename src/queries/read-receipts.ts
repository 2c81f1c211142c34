import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { parseSettings } from '../domain/user-settings';
import { listRowsOfMessage, userIdsIn } from './message-receivers';

type Q = Knex | Knex.Transaction;

/**
 * Active users other than the sender whose `read` flag is set on the
 * message, with their settings (send_read_receipts is decided by the caller:
 * it lives in the users' settings JSON). As Zulip's, neither the users who
 * muted the viewer (their copies of the viewer's messages are read at once,
 * which would tell the viewer they are muted) nor those the viewer muted.
 */
export async function listMessageReaders(
  q: Q,
  messageId: number,
  senderId: number,
  viewerId: number,
): Promise<Array<{ id: number; sendReadReceipts: boolean }>> {
  // The message's rows, by primary key, among its listed receivers (ADR 0059).
  const holders = (await listRowsOfMessage(q, messageId)).map((r) => r.user_id);
  if (holders.length === 0) return [];
  const rows = (await q('user_messages as um')
    .join('users as u', 'u.id', 'um.user_id')
    .whereRaw(userIdsIn('um.user_id', holders))
    .where({ 'um.message_id': messageId, 'u.is_active': true })
    .whereNot('um.user_id', senderId)
    .whereNotIn('um.user_id', q('muted_users').where('muted_user_id', viewerId).select('user_id'))
    .whereNotIn('um.user_id', q('muted_users').where('user_id', viewerId).select('muted_user_id'))
    // Not um.is_unread = 0: the read bit itself, as Zulip's where_read().
    .whereRaw('(um.flags & 1) <> 0')
    .orderBy('um.user_id')
    .select('u.id', 'u.settings')) as Array<Pick<TableRow<'users'>, 'id' | 'settings'>>;
  return rows.map((r) => ({ id: Number(r.id), sendReadReceipts: parseSettings(String(r.settings)).send_read_receipts }));
}
