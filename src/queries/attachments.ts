import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** An uploaded file's record, as the upload, access and sweep code reads it. */
export interface UploadRow {
  id: number;
  realm_id: number;
  owner_id: number;
  file_name: string;
  path_id: string;
  size: number;
  content_type: string | null;
  create_time: number;
}

/** An upload's columns, as every read of an UploadRow selects them (own-attachments.ts too). */
export const COLUMNS = ['id', 'realm_id', 'owner_id', 'file_name', 'path_id', 'size', 'content_type', 'create_time'] as const;

/** COLUMNS as the driver returns them. */
type Selected = Pick<TableRow<'attachments'>, (typeof COLUMNS)[number]>;

export const toUpload = (r: Selected): UploadRow => ({
  id: Number(r.id),
  realm_id: Number(r.realm_id),
  owner_id: Number(r.owner_id),
  file_name: String(r.file_name),
  path_id: String(r.path_id),
  size: Number(r.size),
  content_type: r.content_type == null ? null : String(r.content_type),
  create_time: Number(r.create_time),
});

export async function insertAttachment(q: Q, row: Omit<UploadRow, 'id'>): Promise<number> {
  return insertOne(q, 'attachments', { ...row });
}

/** The organization's upload with this path id, if any. */
export async function findAttachment(q: Q, realmId: number, pathId: string): Promise<UploadRow | null> {
  const row = (await q('attachments')
    .where({ realm_id: realmId, path_id: pathId })
    .first(...COLUMNS)) as Selected | undefined;
  return row ? toUpload(row) : null;
}

/**
 * Whether the user can read some message that links the file: one they
 * received (a user_messages row), or one in a channel whose history is open
 * to them — a public channel for anyone but a guest, or a channel with shared
 * history they are subscribed to. A subscriber who joined a protected-history
 * channel after the message has no row and no shared history: no access.
 */
export async function canReadLinkingMessage(
  q: Q,
  attachmentId: number,
  user: { id: number; realm_id: number; isGuest: boolean },
): Promise<boolean> {
  const row = await q('attachment_messages as am')
    .join('messages as m', 'm.id', 'am.message_id')
    .where('am.attachment_id', attachmentId)
    .andWhere((w) => {
      void w
        .whereExists(q('user_messages as um').whereRaw('um.message_id = m.id').andWhere('um.user_id', user.id).select(q.raw('1')))
        .orWhereExists(
          q('channels as c')
            .whereRaw('c.recipient_id = m.recipient_id')
            .andWhere('c.realm_id', user.realm_id)
            .andWhere((c) => {
              if (!user.isGuest) void c.where('c.invite_only', false);
              void c.orWhere((s) =>
                s
                  .where('c.history_public_to_subscribers', true)
                  .whereExists(
                    q('subscriptions as s')
                      .whereRaw('s.recipient_id = c.recipient_id')
                      .andWhere({ 's.user_id': user.id, 's.active': true })
                      .select(q.raw('1')),
                  ),
              );
            })
            .select(q.raw('1')),
        );
    })
    .first(q.raw('1 as found'));
  return row !== undefined;
}

/** Bytes of the organization's uploads (attachment events' upload_space_used). */
export async function uploadSpaceUsed(q: Q, realmId: number): Promise<number> {
  const row = (await q('attachments').where({ realm_id: realmId }).sum('size as total').first()) as { total: unknown } | undefined;
  return Number(row?.total ?? 0);
}

/** Live messages linking each of these attachments (ascending ids). */
export async function listLinkedMessageIds(q: Q, attachmentIds: readonly number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(attachmentIds.map((id) => [id, []]));
  if (attachmentIds.length === 0) return out;
  const rows: Array<Pick<TableRow<'attachment_messages'>, 'attachment_id' | 'message_id'>> = await q('attachment_messages')
    .whereIn('attachment_id', [...attachmentIds])
    .orderBy(['attachment_id', 'message_id'])
    .select('attachment_id', 'message_id');
  for (const r of rows) out.get(Number(r.attachment_id))?.push(Number(r.message_id));
  return out;
}

/** Of these path ids, the organization's uploads (whoever uploaded them). */
export async function listAttachmentsByPath(q: Q, realmId: number, pathIds: readonly string[]): Promise<UploadRow[]> {
  if (pathIds.length === 0) return [];
  const rows: Selected[] = await q('attachments')
    .where({ realm_id: realmId })
    .whereIn('path_id', [...new Set(pathIds)].slice(0, 1000))
    .select(...COLUMNS);
  return rows.map(toUpload);
}

/**
 * Uploads created before `before` that no message links, live or archived
 * (an archived message may be restored, and its files with it, until the
 * archive's vacuum deletes it and its links), oldest first, at most `limit`.
 */
export async function listUnclaimedUploads(q: Q, before: number, limit: number): Promise<UploadRow[]> {
  const rows: Selected[] = await q('attachments as a')
    .where('a.create_time', '<', before)
    .whereNotExists(q('attachment_messages as am').whereRaw('am.attachment_id = a.id').select(q.raw('1')))
    .whereNotExists(q('archived_attachment_messages as aam').whereRaw('aam.attachment_id = a.id').select(q.raw('1')))
    .orderBy('a.id')
    .limit(limit)
    .select(...COLUMNS.map((c) => `a.${c}`));
  return rows.map(toUpload);
}

/**
 * Deletes these records where no message links them still (one may have
 * claimed the file since they were listed); returns the ids deleted.
 */
export async function deleteUnclaimedUploads(q: Q, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  await q('attachments')
    .whereIn('id', [...ids])
    .whereNotExists(q('attachment_messages as am').whereRaw('am.attachment_id = attachments.id').select(q.raw('1')))
    .whereNotExists(q('archived_attachment_messages as aam').whereRaw('aam.attachment_id = attachments.id').select(q.raw('1')))
    .del();
  const left: Array<Pick<Selected, 'id'>> = await q('attachments')
    .whereIn('id', [...ids])
    .select('id');
  const kept = new Set(left.map((r) => Number(r.id)));
  return ids.filter((id) => !kept.has(id));
}

/** The uploads these messages link (each once), in slices of 1,000 message ids. */
export async function listAttachmentsLinkedTo(q: Q, messageIds: readonly number[]): Promise<UploadRow[]> {
  const out = new Map<number, UploadRow>();
  for (let i = 0; i < messageIds.length; i += 1000) {
    const rows: Selected[] = await q('attachments as a')
      .whereExists(
        q('attachment_messages as am')
          .whereRaw('am.attachment_id = a.id')
          .whereIn('am.message_id', messageIds.slice(i, i + 1000))
          .select(q.raw('1')),
      )
      .select(...COLUMNS.map((c) => `a.${c}`));
    for (const r of rows) out.set(Number(r.id), toUpload(r));
  }
  return [...out.values()].sort((a, b) => a.id - b.id);
}

/** Deletes these records (an upload whose file could not be stored). */
export async function deleteAttachments(q: Q, ids: readonly number[]): Promise<void> {
  if (ids.length > 0)
    await q('attachments')
      .whereIn('id', [...ids])
      .del();
}

/** Links a message to these attachments (already linked ones stay as they are). */
export async function linkAttachments(q: Q, messageId: number, attachmentIds: readonly number[]): Promise<void> {
  if (attachmentIds.length === 0) return;
  await q('attachment_messages')
    .insert(attachmentIds.map((id) => ({ attachment_id: id, message_id: messageId })))
    .onConflict(['attachment_id', 'message_id'])
    .ignore();
}
