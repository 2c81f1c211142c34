import type { Knex } from 'knex';
import type { Data } from '../contract';
import { ApiError } from '../errors';
import { listMessageReaders } from '../queries/read-receipts';
import { accessMessage } from './messages';
import type { Caller } from './viewer';

/**
 * GET /messages/{id}/read_receipts. As Zulip: the message is checked first
 * (missing and inaccessible answer alike), then the organization's setting.
 * Readers are active users with the read flag and send_read_receipts on;
 * the sender never (they read it by writing it); bots are included (a bot
 * may mark messages read to say it processed them); users muted by the
 * caller and users who muted the caller are left out, as in Zulip.
 */
export async function getReadReceipts(db: Knex, viewer: Caller, messageId: number): Promise<Data<'get-read-receipts'>> {
  const { row } = await accessMessage(db, viewer, messageId);
  const realm = viewer.realm;
  if (!realm.enable_read_receipts) throw new ApiError('Read receipts are disabled in this organization.');
  const readers = await listMessageReaders(db, row.id, row.sender_id, viewer.user.id);
  return { user_ids: readers.filter((r) => r.sendReadReceipts).map((r) => r.id) };
}
