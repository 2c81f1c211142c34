import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { accessUpload, fileNotFound, getUploadForToken } from '../access/attachments';
import { INLINE_CONTENT_TYPES, verifyFileToken } from '../domain/uploads';
import { ApiError } from '../errors';
import type { UploadRow } from '../queries/attachments';
import { authenticateBasicOrSession } from './auth';
import { consumeCallerLimit, responseRateLimitNotes } from './caller-limits';
import { sendStream } from './send-stream';
import { doNoteVisit } from '../actions/soft-deactivation';

/**
 * The uploaded files themselves, at the URLs message HTML links to (outside
 * /api/v1, as Zulip serves them):
 * - /user_uploads/<path_id>, with the API's Basic authentication or the web
 *   client's session cookie (as Zulip's; a GET needs no CSRF token), and
 *   Zulip's read rules (src/access/attachments.ts);
 * - /user_uploads/temporary/<token>/<filename>, a URL from
 *   get-file-temporary-url: no credentials, good for 60 seconds.
 * Errors are the API's JSON bodies; each request counts against the same rate limits as the
 * API's (the caller's, or for a temporary URL the client address's).
 */
export function fileRouter(ctx: AppContext): Router {
  const router = Router();

  router.get('/temporary/:token/:filename', async (req: Request, res: Response) => {
    const token = String(req.params.token);
    const pathId = verifyFileToken(ctx.secret, token, Math.floor(ctx.clock.now() / 1000));
    if (!pathId) throw new ApiError('Invalid token');
    if (pathId.slice(pathId.lastIndexOf('/') + 1) !== String(req.params.filename)) throw new ApiError('Invalid filename');
    await consumeCallerLimit(ctx, req, null, responseRateLimitNotes(res));
    await serve(ctx, req, res, await getUploadForToken(ctx.db, pathId));
  });

  router.get(/.*/, async (req: Request, res: Response) => {
    const { user } = await authenticateBasicOrSession(ctx.db, ctx.caches, req, ctx.config.externalUrl);
    // An idle caller is caught up first: access to a protected-history upload follows their rows (ADR 0058).
    await doNoteVisit(ctx, user);
    await consumeCallerLimit(ctx, req, user, responseRateLimitNotes(res));
    const pathId = decodePathId(req.path);
    if (pathId === null) throw fileNotFound();
    await serve(ctx, req, res, await accessUpload(ctx.db, user, pathId));
  });
  return router;
}

/**
 * The path id in a request path, each segment percent-decoded on its own: a
 * segment that decodes to '/', '\', '..' (say %2e%2e or %2F) or anything else
 * a path id cannot hold fails the shape check that comes next, before any
 * lookup. Null when an escape is malformed.
 */
function decodePathId(requestPath: string): string | null {
  try {
    return requestPath
      .replace(/^\/+/, '')
      .split('/')
      .map((s) => {
        const d = decodeURIComponent(s);
        return d.includes('/') ? '\\' : d;
      })
      .join('/');
  } catch {
    return null;
  }
}

/**
 * Sends a stored file: its content type; inline only for the types a browser
 * shows without running anything (images, audio, video, PDF, plain text),
 * a download for all others (HTML, SVG …); `nosniff`, so a browser never
 * guesses a script out of it; a Content-Security-Policy that lets nothing in
 * it run or load even if it were shown; and one byte range when asked.
 */
async function serve(ctx: AppContext, req: Request, res: Response, row: UploadRow): Promise<void> {
  const stat = await ctx.storage.stat(row.path_id);
  if (!stat) throw fileNotFound();
  const size = stat.size;
  const type = row.content_type ?? 'application/octet-stream';
  const inline = INLINE_CONTENT_TYPES.has(type);
  res.setHeader('Content-Type', type === 'text/plain' ? 'text/plain; charset=utf-8' : type);
  res.setHeader('Content-Disposition', contentDisposition(inline ? 'inline' : 'attachment', row.file_name));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
  res.setHeader('Cache-Control', 'private, max-age=86400');
  res.setHeader('Accept-Ranges', 'bytes');

  const range = parseRange(req.headers.range, size);
  if (range === 'unsatisfiable') {
    res.setHeader('Content-Range', `bytes */${size}`);
    throw new ApiError('Requested range not satisfiable', 'BAD_REQUEST', 416, {}, { 'Content-Range': `bytes */${size}` });
  }
  if (range) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    res.setHeader('Content-Length', String(size));
  }
  if (req.method === 'HEAD' || size === 0) {
    res.end();
    return;
  }
  const stream = await ctx.storage.read(row.path_id, range ?? undefined);
  if (!stream) throw fileNotFound();
  await sendStream(stream, res);
}

/** `inline` or `attachment`, with the name in RFC 6266 form (ASCII fallback plus UTF-8). */
function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const utf8 = encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}

/**
 * One byte range (`bytes=a-b`, `bytes=a-`, `bytes=-n`). Several ranges or a
 * header that does not parse are ignored — the whole file is sent, as HTTP
 * allows; a range starting past the end is unsatisfiable (416).
 */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return null;
  return { start, end };
}
