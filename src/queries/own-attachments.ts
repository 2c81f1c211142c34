import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { COLUMNS, toUpload, type UploadRow } from './attachments';

type Q = Knex | Knex.Transaction;

/** The user's uploads, oldest first (GET /attachments). */
export async function listOwnAttachments(q: Q, ownerId: number): Promise<UploadRow[]> {
  const rows = await q('attachments')
    .where({ owner_id: ownerId })
    .orderBy('id')
    .select(...COLUMNS);
  return rows.map(toUpload);
}

/** The user's own upload with this id, locked for the transaction; undefined for another user's or a missing one. */
export async function findOwnAttachmentForUpdate(q: Q, ownerId: number, id: number): Promise<UploadRow | undefined> {
  const query = q('attachments')
    .where({ id, owner_id: ownerId })
    .first(...COLUMNS);
  // SQLite has no row locks (its writer holds the database); knex warns on forUpdate there.
  if (dialectOf(q) === 'mysql') query.forUpdate();
  const row = await query;
  return row ? toUpload(row) : undefined;
}

/**
 * Deletes an upload's record with its links to live and archived messages:
 * the messages themselves keep their content (and so their link to the
 * file, now broken). The archived links have no foreign key, and a message
 * restored later must not link the record again.
 */
export async function deleteAttachmentWithLinks(q: Q, id: number): Promise<void> {
  await q('attachment_messages').where({ attachment_id: id }).delete();
  await q('archived_attachment_messages').where({ attachment_id: id }).delete();
  await q('attachments').where({ id }).delete();
}
