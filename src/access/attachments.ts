import type { Knex } from 'knex';
import { isSafePathId } from '../domain/uploads';
import { isGuestRole } from '../domain/roles';
import { ApiError } from '../errors';
import { canReadLinkingMessage, findAttachment, listAttachmentsByPath, type UploadRow } from '../queries/attachments';
import type { UserRow } from '../queries/rows';

/**
 * One answer for a file that does not exist and one the caller may not read,
 * so that a path id cannot be probed (Zulip tells them apart; Parley does not).
 */
export const fileNotFound = () => new ApiError('File not found.', 'BAD_REQUEST', 404);

/**
 * The upload at `pathId` if `user` may read it, as Zulip decides: its
 * uploader, or anyone who can read a message linking it (received it, or can
 * read the channel's history: a public channel for members, shared history
 * while subscribed). A malformed path id is refused before any lookup.
 */
export async function accessUpload(db: Knex, user: UserRow, pathId: string): Promise<UploadRow> {
  if (!isSafePathId(pathId) || Number(pathId.slice(0, pathId.indexOf('/'))) !== user.realm_id) throw fileNotFound();
  const row = await findAttachment(db, user.realm_id, pathId);
  if (!row) throw fileNotFound();
  if (row.owner_id === user.id) return row;
  if (await canReadLinkingMessage(db, row.id, { id: user.id, realm_id: user.realm_id, isGuest: isGuestRole(user.role) })) return row;
  throw fileNotFound();
}

/** The upload a valid temporary URL names (the token was checked by the caller), if it still exists. */
export async function getUploadForToken(db: Knex, pathId: string): Promise<UploadRow> {
  if (!isSafePathId(pathId)) throw fileNotFound();
  const row = await findAttachment(db, Number(pathId.slice(0, pathId.indexOf('/'))), pathId);
  if (!row) throw fileNotFound();
  return row;
}

/**
 * Of the uploads these path ids name, the ones `user` may attach to a
 * message: as Zulip claims attachments, every file the sender can read —
 * their own, or one a message they can read links (quoting a message with
 * an image links that image again, so the quote's readers can open it).
 * Only when content names /user_uploads/, so one lookup plus one check per
 * foreign file.
 */
export async function listAttachableUploads(db: Knex, user: UserRow, pathIds: readonly string[]): Promise<UploadRow[]> {
  const rows = await listAttachmentsByPath(db, user.realm_id, pathIds);
  const out: UploadRow[] = [];
  for (const row of rows) {
    if (row.owner_id === user.id) out.push(row);
    else if (await canReadLinkingMessage(db, row.id, { id: user.id, realm_id: user.realm_id, isGuest: isGuestRole(user.role) }))
      out.push(row);
  }
  return out;
}
