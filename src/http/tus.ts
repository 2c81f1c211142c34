import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { FileStore as TusFileStore } from '@tus/file-store';
import { ERRORS, Server, type Upload } from '@tus/server';
import type { AppContext } from '../context';
import { finishResumableUpload } from '../handlers/uploads';
import type { UserRow } from '../queries/rows';
import { authenticateBasic } from './auth';
import { toErrorResponse } from './errors';

/** Where unfinished resumable uploads are kept, under DATA_DIR/uploads (a name no path id can have). */
export const TUS_DIRECTORY = '.tus';

/** The metadata key holding the uploader's id (set by the server; whatever a client sends under it is replaced). */
const OWNER_KEY = 'parley_user_id';

/** A tus hook's error: tus answers it with this status and body. */
const tusError = (status: number, msg: string, code = 'BAD_REQUEST') => ({
  status_code: status,
  body: JSON.stringify({ result: 'error', msg, code }),
});

/** The Node request under the web Request that @tus/server hands its hooks. */
function nodeRequest(req: unknown): IncomingMessage | undefined {
  return (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
}

/**
 * POST/HEAD/PATCH/DELETE /api/v1/tus: resumable uploads (tus 1.0, through
 * @tus/server with its file store), Zulip's second way to upload a file.
 * - The API's Basic authentication on every request but OPTIONS (protocol
 *   discovery, which browsers send without credentials); Zulip's 401 otherwise.
 * - Upload-Length is checked against max_file_upload_size_mib on creation
 *   (413 with Zulip's message) and the bytes against it on every PATCH; a
 *   deferred length is refused, as Zulip does.
 * - The uploader's id is written into the upload's metadata at creation;
 *   anyone else continuing, inspecting or ending the upload gets the same 404
 *   as for an upload that does not exist.
 * - Unfinished bytes live in DATA_DIR/uploads/.tus. When the last byte
 *   arrives the file goes through the same step as POST /user_uploads
 *   (`doStoreUpload`: path id, attachments row, `attachment add`), the partial
 *   copy is removed, and that final response carries POST /user_uploads' body
 *   (`url`, `uri`, `filename`) as JSON, with status 200 instead of tus' bare
 *   204 — Zulip's tus endpoint likewise returns the new upload's url and
 *   filename from its finishing hook.
 * The lock that keeps two PATCHes of one upload apart is in memory: one
 * server process per upload directory for resumable uploads.
 */
export function tusRouter(ctx: AppContext): Router {
  const users = new WeakMap<IncomingMessage, UserRow>();
  const directory = path.join(ctx.config.dataDir, 'uploads', TUS_DIRECTORY);
  const datastore = new TusFileStore({ directory });
  const maxBytes = ctx.config.maxFileUploadSizeMib * 1024 * 1024;
  const tooLarge = `Uploaded file is larger than the allowed limit of ${ctx.config.maxFileUploadSizeMib} MiB`;

  const userOf = (req: unknown): UserRow => {
    const node = nodeRequest(req);
    const user = node && users.get(node);
    // The router authenticates every request before tus sees it.
    if (!user) throw tusError(401, 'Not logged in: API authentication or user session required', 'UNAUTHORIZED');
    return user;
  };

  const tus = new Server({
    path: '/api/v1/tus',
    datastore,
    maxSize: maxBytes,
    relativeLocation: true,
    disableTerminationForFinishedUploads: true,
    onUploadCreate: async (req, upload) => {
      const user = userOf(req);
      if (upload.sizeIsDeferred) throw tusError(400, 'Deferred file size not allowed.');
      return { metadata: { ...upload.metadata, [OWNER_KEY]: String(user.id) } };
    },
    onIncomingRequest: async (req, id) => {
      const user = userOf(req);
      if (req.method === 'POST') return;
      let upload: Upload;
      try {
        upload = await datastore.getUpload(id);
      } catch {
        throw ERRORS.FILE_NOT_FOUND;
      }
      // Someone else's upload is answered as a missing one.
      if (upload.metadata?.[OWNER_KEY] !== String(user.id)) throw ERRORS.FILE_NOT_FOUND;
    },
    onUploadFinish: async (req, upload) => {
      const user = userOf(req);
      const pending = await ctx.storage.create();
      let result;
      try {
        await pipeline(fs.createReadStream(path.join(directory, upload.id)), pending.stream);
        result = await finishResumableUpload(ctx, user, {
          originalname: upload.metadata?.filename ?? '',
          mimetype: upload.metadata?.filetype ?? '',
          size: upload.size ?? upload.offset,
          file: pending,
        });
      } finally {
        await pending.abort();
      }
      await datastore.remove(upload.id);
      return {
        status_code: req.method === 'PATCH' ? 200 : 201,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ result: 'success', msg: '', ...result }),
      };
    },
    // Every error body in Zulip's shape; the protocol's own refusals keep tus' wording,
    // and anything unexpected (a failing database) is the API's 500, never its message.
    onResponseError: (_req, err) => {
      if (!('status_code' in err)) {
        const { status, body } = toErrorResponse(err);
        return { status_code: status, body: JSON.stringify(body) };
      }
      if (err.status_code === ERRORS.ERR_MAX_SIZE_EXCEEDED.status_code) return tusError(413, tooLarge);
      if (err.body.startsWith('{')) return undefined;
      return tusError(err.status_code, err.body.trim(), err.status_code >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
    },
  });

  const router = Router();
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (req.method !== 'OPTIONS') users.set(req, await authenticateBasic(ctx.db, req.headers.authorization, req.headers.host));
    } catch (err) {
      next(err);
      return;
    }
    await tus.handle(req, res);
  });
  return router;
}
