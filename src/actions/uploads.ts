import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { newPathId, noFileToUpload, sanitizeFileName, signFileToken, uploadContentType } from '../domain/uploads';
import { ApiError } from '../errors';
import type { EventBody, EventBus } from '../events/bus';
import { accessUpload } from '../access/attachments';
import {
  deleteAttachments,
  deleteUnclaimedUploads,
  insertAttachment,
  listLinkedMessageIds,
  listUnclaimedUploads,
  uploadSpaceUsed,
  type UploadRow,
} from '../queries/attachments';
import type { RealmRow, UserRow } from '../queries/rows';
import { checkUploadWithinQuotaInTx } from './upload-quota';
import type { StagedFile } from '../storage/files';
import { openTusStore, TUS_DIRECTORY } from '../storage/tus';

/**
 * A file the request carried, already in storage but not yet published
 * (src/http/body.ts receiveUploads), or a resumable upload's finished file.
 */
export interface IncomingFile {
  originalname: string;
  mimetype: string;
  size: number;
  file: StagedFile;
}

type AttachmentEvent = EventBody<Schema<'AttachmentEvent'>>;
type AttachmentRemoveEvent = EventBody<Schema<'AttachmentRemoveEvent'>>;

const seconds = (ctx: AppContext) => Math.floor(ctx.clock.now() / 1000);

/**
 * POST /user_uploads: exactly one file (Zulip's two refusals), stored under a
 * new path id with its sanitised name, recorded as an attachment of the
 * uploader, who alone may read it until a message links it.
 */
export async function doUploadFile(
  ctx: AppContext,
  user: UserRow,
  realm: RealmRow,
  files: readonly IncomingFile[],
): Promise<Data<'upload-file'>> {
  if (files.length === 0) throw noFileToUpload();
  if (files.length > 1) throw new ApiError('You may only upload one file at a time');
  return doStoreUpload(ctx, user, realm, files[0]!);
}

/**
 * One finished file becomes an upload of `user`: published under a new path
 * id with its sanitised name, recorded as an attachment, announced to the
 * owner. Both ways of uploading end here: POST /user_uploads and a completed
 * resumable (tus) upload.
 */
export async function doStoreUpload(ctx: AppContext, user: UserRow, realm: RealmRow, incoming: IncomingFile): Promise<Data<'upload-file'>> {
  const name = sanitizeFileName(incoming.originalname);
  const pathId = newPathId(user.realm_id, name, randomBytes(19));
  // The record first, the file after its commit. A crash between the two
  // leaves a record without a file: nobody was told its URL, no message can
  // link it, and the unclaimed-upload sweep deletes it after the grace period
  // (the bytes left in the staging area go with the leftovers). The other
  // order would leave, after a crash, a file that no record names, which
  // only a walk of the whole store could find. The owner hears of the upload
  // only once the file is in place.
  const announce: Array<() => void> = [];
  const row = await inTransaction(ctx.db, async (tx) => {
    await checkUploadWithinQuotaInTx(tx.trx, realm, incoming.size);
    const fields = {
      realm_id: user.realm_id,
      owner_id: user.id,
      file_name: name,
      path_id: pathId,
      size: incoming.size,
      content_type: uploadContentType(incoming.mimetype, name),
      create_time: seconds(ctx),
    };
    const stored = { id: await insertAttachment(tx.trx, fields), ...fields };
    await queueAttachmentEvents(ctx.bus, { ...tx, afterCommit: (fn) => announce.push(fn) }, 'add', user.realm_id, [stored]);
    return stored;
  });
  try {
    await incoming.file.commit(pathId);
  } catch (err) {
    // No file, no record: the upload did not happen.
    await deleteAttachments(ctx.db, [row.id]);
    await ctx.storage.remove([pathId]);
    throw err;
  }
  for (const fn of announce) fn();
  const url = `/user_uploads/${row.path_id}`;
  return { uri: url, url, filename: name };
}

/**
 * Queues, after commit, one attachment event per upload to its owner:
 * `add` for a new upload, `update` when the messages linking it changed —
 * each with the messages linking it now and the organization's space used.
 */
export async function queueAttachmentEvents(
  bus: EventBus,
  tx: Tx,
  op: 'add' | 'update',
  realmId: number,
  rows: ReadonlyArray<Pick<UploadRow, 'id' | 'owner_id' | 'file_name' | 'path_id' | 'size' | 'create_time'>>,
): Promise<void> {
  if (rows.length === 0) return;
  const linked = await listLinkedMessageIds(
    tx.trx,
    rows.map((r) => r.id),
  );
  const used = await uploadSpaceUsed(tx.trx, realmId);
  for (const r of rows) {
    const event: AttachmentEvent = {
      type: 'attachment',
      op,
      attachment: {
        id: r.id,
        name: r.file_name,
        path_id: r.path_id,
        size: r.size,
        create_time: r.create_time,
        message_ids: linked.get(r.id) ?? [],
      },
      upload_space_used: used,
    };
    tx.afterCommit(() => bus.publish({ event, userIds: [r.owner_id] }));
  }
}

/**
 * GET /user_uploads/{realm_id_str}/…: a URL that serves the file without
 * credentials for a minute (Zulip's temporary URL), to a caller who may
 * read it now.
 */
export async function getFileTemporaryUrl(ctx: AppContext, user: UserRow, pathId: string): Promise<Data<'get-file-temporary-url'>> {
  const row = await accessUpload(ctx.db, user, pathId);
  const token = signFileToken(ctx.secret, row.path_id, seconds(ctx));
  return { url: `/user_uploads/temporary/${token}/${encodeURIComponent(row.file_name)}` };
}

/**
 * One bounded round of the unclaimed-upload sweep: uploads older than the
 * grace period that no message links (live or archived) are deleted, at most
 * `uploadSweepBatchSize` per call: the records in one transaction (each only
 * if still unlinked), then their files, then `remove` events to the owners.
 * The server calls it on a timer; tests call it directly.
 */
export async function sweepUnclaimedUploads(ctx: AppContext): Promise<{ removed: number }> {
  const cutoff = seconds(ctx) - ctx.config.unclaimedUploadsGraceDays * 86_400;
  const candidates = await listUnclaimedUploads(ctx.db, cutoff, ctx.config.uploadSweepBatchSize);
  if (candidates.length === 0) return { removed: 0 };
  const removed = await inTransaction(ctx.db, async (tx) => {
    const gone = new Set(
      await deleteUnclaimedUploads(
        tx.trx,
        candidates.map((c) => c.id),
      ),
    );
    const rows = candidates.filter((c) => gone.has(c.id));
    const realms = [...new Set(rows.map((r) => r.realm_id))];
    const used = new Map<number, number>();
    for (const realmId of realms) used.set(realmId, await uploadSpaceUsed(tx.trx, realmId));
    for (const r of rows) {
      const event: AttachmentRemoveEvent = {
        type: 'attachment',
        op: 'remove',
        attachment: { id: r.id },
        upload_space_used: used.get(r.realm_id)!,
      };
      tx.afterCommit(() => ctx.bus.publish({ event, userIds: [r.owner_id] }));
    }
    return rows;
  });
  // After the commit: a file is never gone while its record is still there.
  await ctx.storage.remove(removed.map((r) => r.path_id));
  return { removed: removed.length };
}

/**
 * Staged files are this old (by their last write) before the sweep takes
 * them for leftovers: far beyond the life of any request that could still
 * be writing one, since the bytes of a live upload keep arriving.
 */
export const LEFTOVER_AGE_MS = 24 * 3_600_000;

/**
 * One bounded round of the leftover sweep, what no record names and no
 * request will finish:
 * - files being written into the store that a crashed process left
 *   (older than LEFTOVER_AGE_MS, at most `uploadSweepBatchSize` looked at);
 * - resumable uploads older than TUS_UPLOAD_EXPIRY_HOURS: unfinished ones,
 *   and finished ones whose process died while storing them (tus'
 *   `deleteExpired`, src/storage/tus.ts; it reads every upload's record, and
 *   the directory holds only uploads in progress).
 */
export async function sweepUploadLeftovers(ctx: AppContext): Promise<{ staged: number; expiredTus: number }> {
  const uploadsRoot = path.join(ctx.config.dataDir, 'uploads');
  const expiryMs = ctx.config.tusUploadExpiryHours * 3_600_000;
  const staged = await ctx.storage.removeLeftovers(LEFTOVER_AGE_MS, ctx.config.uploadSweepBatchSize);
  let expiredTus = 0;
  if (fs.existsSync(path.join(uploadsRoot, TUS_DIRECTORY))) expiredTus = await openTusStore(uploadsRoot, expiryMs).deleteExpired();
  return { staged, expiredTus };
}

/** Runs both sweeps (unclaimed uploads, then leftovers) every `uploadSweepIntervalMs` on the context's clock, one batch each time; returns the stop function. */
export function startUploadSweep(ctx: AppContext, onError: (err: unknown) => void): () => void {
  let cancel: () => void = () => undefined;
  let stopped = false;
  const tick = () => {
    sweepUnclaimedUploads(ctx)
      .catch(onError)
      .then(() => sweepUploadLeftovers(ctx))
      .catch(onError)
      .finally(() => {
        if (!stopped) cancel = ctx.clock.schedule(tick, ctx.config.uploadSweepIntervalMs);
      });
  };
  cancel = ctx.clock.schedule(tick, ctx.config.uploadSweepIntervalMs);
  return () => {
    stopped = true;
    cancel();
  };
}
