import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { ERRORS, Server, type Upload } from '@tus/server';
import type { AppContext } from '../context';
import { checkResumableUploadWithinQuota, finishResumableUpload } from '../handlers/uploads';
import type { UserRow } from '../queries/rows';
import { authenticateBasic } from './auth';
import { FileLocker } from '../storage/file-locker';
import { countUnfinishedUploads, openTusStore, TUS_DIRECTORY, TUS_LOCK_DIRECTORY, tusUploadPrefix } from '../storage/tus';
import { toErrorResponse } from './errors';
import { consumeCallerLimit, responseRateLimitNotes } from './caller-limits';

/**
 * srvx's Node adapter, what @tus/server's own handle() uses (an ES module whose types this
 * project's module resolution cannot name, so required with the two signatures used here).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const srvxNode = require('srvx/node') as {
  NodeRequest: new (init: { req: IncomingMessage; res: ServerResponse }) => globalThis.Request;
  sendNodeResponse(res: ServerResponse, response: globalThis.Response): Promise<void>;
};

/** The metadata key holding the uploader's id (set by the server; whatever a client sends under it is replaced). */
const OWNER_KEY = 'parley_user_id';

/** A tus hook's error: tus answers it with this status and body. */
const tusError = (status: number, msg: string, code = 'BAD_REQUEST') => ({
  status_code: status,
  body: JSON.stringify({ result: 'error', msg, code }),
});

/**
 * The web Request handed to @tus/server, carrying its authenticated caller:
 * tus passes this same object to every hook, which is how the caller reaches
 * them (tus' hooks take no other argument of ours).
 */
class CallerRequest extends srvxNode.NodeRequest {
  constructor(
    init: { req: IncomingMessage; res: ServerResponse },
    readonly user: UserRow,
  ) {
    super(init);
  }
}

/**
 * POST/HEAD/PATCH/DELETE /api/v1/tus: resumable uploads (tus 1.0, through
 * @tus/server with its file store), Zulip's second way to upload a file.
 * - The API's Basic authentication on every request but OPTIONS (protocol
 *   discovery, which browsers send without credentials); Zulip's 401 otherwise.
 * - Upload-Length is checked against max_file_upload_size_mib on creation
 *   (413 with Zulip's message) and the bytes against it on every PATCH; a
 *   deferred length is refused, as Zulip does.
 * - Creation is refused (400, Zulip's JSON) when the declared length would take
 *   the organization past its upload quota (REALM_UPLOAD_QUOTA, checked again
 *   when the last byte arrives), or when the user already has
 *   TUS_MAX_UNFINISHED_UPLOADS unfinished uploads or theirs would declare more
 *   than TUS_MAX_UNFINISHED_MIB together: nobody parks the disk for a day.
 * - The uploader's id is written into the upload's metadata at creation;
 *   anyone else continuing, inspecting or ending the upload gets the same 404
 *   as for an upload that does not exist.
 * - Unfinished bytes live in DATA_DIR/uploads/.tus. When the last byte
 *   arrives the file goes through the same step as POST /user_uploads
 *   (`doStoreUpload`: path id, attachments row, the file moved into the
 *   `FileStore`, `attachment add`); whatever happens there, nothing of the
 *   upload stays in .tus; and that final response carries POST /user_uploads' body
 *   (`url`, `uri`, `filename`) as JSON, with status 200 instead of tus' bare
 *   204 — Zulip's tus endpoint likewise returns the new upload's url and
 *   filename from its finishing hook.
 * - Unfinished uploads expire `TUS_UPLOAD_EXPIRY_HOURS` after their creation
 *   (410 Gone; the upload sweep deletes them).
 * The lock that keeps two requests on one upload apart is a file beside it
 * (`FileLocker`), so several server processes may share the directory.
 */
export function tusRouter(ctx: AppContext): Router {
  const uploadsRoot = path.join(ctx.config.dataDir, 'uploads');
  const expiryMs = ctx.config.tusUploadExpiryHours * 3_600_000;
  const datastore = openTusStore(uploadsRoot, expiryMs);
  const maxBytes = ctx.config.maxFileUploadSizeMib * 1024 * 1024;
  const tooLarge = `Uploaded file is larger than the allowed limit of ${ctx.config.maxFileUploadSizeMib} MiB`;

  const userOf = (req: unknown): UserRow => {
    // The router authenticates every request but OPTIONS (which reaches no hook) before tus sees it.
    if (!(req instanceof CallerRequest)) throw tusError(401, 'Not logged in: API authentication or user session required', 'UNAUTHORIZED');
    return req.user;
  };

  const tus = new Server({
    path: '/api/v1/tus',
    datastore,
    locker: new FileLocker(path.join(uploadsRoot, TUS_LOCK_DIRECTORY)),
    maxSize: maxBytes,
    relativeLocation: true,
    disableTerminationForFinishedUploads: true,
    // `<user id>-<random>`: a user's unfinished uploads are counted by a listing.
    namingFunction: (req) => `${tusUploadPrefix(userOf(req).id)}${randomBytes(16).toString('hex')}`,
    onUploadCreate: async (req, upload) => {
      const user = userOf(req);
      if (upload.sizeIsDeferred) throw tusError(400, 'Deferred file size not allowed.');
      const size = upload.size ?? 0;
      // Refused before any byte arrives; checked again when the last one has (doStoreUpload).
      await checkResumableUploadWithinQuota(ctx, user, size);
      const unfinished = await countUnfinishedUploads(datastore, uploadsRoot, user.id, expiryMs);
      if (unfinished.count >= ctx.config.tusMaxUnfinishedUploads) {
        throw tusError(400, `You have ${unfinished.count} unfinished uploads, the most allowed: finish or cancel one first.`);
      }
      if (unfinished.bytes + size > ctx.config.tusMaxUnfinishedMib * 1024 * 1024) {
        throw tusError(
          400,
          `Your unfinished uploads may not exceed ${ctx.config.tusMaxUnfinishedMib} MiB together: finish or cancel one first.`,
        );
      }
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
      const assembled = path.join(uploadsRoot, TUS_DIRECTORY, path.basename(upload.id));
      let result;
      try {
        result = await finishResumableUpload(ctx, user, {
          originalname: upload.metadata?.filename ?? '',
          mimetype: upload.metadata?.filetype ?? '',
          size: upload.size ?? upload.offset,
          // Moved, not copied: on the same file system a rename, whatever the size.
          file: { commit: (key) => ctx.storage.moveIn(assembled, key), abort: async () => undefined },
        });
      } finally {
        // Stored or refused, the upload is over: its bytes (unless moved) and its record go.
        // A finished upload never expires, so nothing else would remove them.
        await fsp.rm(assembled, { force: true });
        await fsp.rm(`${assembled}.json`, { force: true });
      }
      return {
        status_code: req.method === 'PATCH' ? 200 : 201,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ result: 'success', msg: '', ...result }),
      };
    },
    // The size refusal in Zulip's words; anything unexpected (a failing database) is the
    // API's error (a 500 without its message). tus' own text refusals become Zulip's JSON on
    // the way out (zulipShapedError).
    onResponseError: (_req, err) => {
      if (!('status_code' in err)) {
        const { status, body } = toErrorResponse(err);
        return { status_code: status, body: JSON.stringify(body) };
      }
      if (err.status_code === ERRORS.ERR_MAX_SIZE_EXCEEDED.status_code) return tusError(413, tooLarge);
      return undefined;
    },
  });

  const router = Router();
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    let request: globalThis.Request;
    try {
      if (req.method !== 'OPTIONS') {
        const { user } = await authenticateBasic(ctx.caches, req.headers.authorization, req.headers.host, ctx.config.externalUrl);
        await consumeCallerLimit(ctx, req, user, responseRateLimitNotes(res));
        request = new CallerRequest({ req, res }, user);
      } else {
        request = new srvxNode.NodeRequest({ req, res });
      }
    } catch (err) {
      next(err);
      return;
    }
    // What tus.handle does, with every refusal made Zulip's JSON error on the way out.
    const response = await tus.handleWeb(request);
    await srvxNode.sendNodeResponse(res, await zulipShapedError(response));
  });
  return router;
}

/**
 * tus writes some refusals itself, as text (a missing Tus-Resumable header, an
 * invalid header such as `Upload-Length: -1`, an unknown method), and every
 * body it writes as text/plain; the API's clients read JSON. A refusal leaves
 * here as Zulip's error body (one tus or a hook already wrote in that shape
 * keeps its fields), with its status and tus' headers.
 */
async function zulipShapedError(response: globalThis.Response): Promise<globalThis.Response> {
  if (response.status < 400) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (!body || typeof body !== 'object' || (body as { result?: unknown }).result !== 'error') {
    const code = response.status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST';
    body = { result: 'error', msg: text.trim() || response.statusText, code };
  }
  const json = JSON.stringify(body);
  const headers = new Headers(response.headers);
  headers.set('Content-Type', 'application/json');
  headers.set('Content-Length', String(Buffer.byteLength(json)));
  return new globalThis.Response(json, { status: response.status, headers });
}
