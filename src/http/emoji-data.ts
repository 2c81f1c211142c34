import { createHash } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { EMOJI_DATA_PATH } from '../domain/emoji';

/**
 * The emoji data document POST /register's server_emoji_data_url names:
 * `{"code_to_names": {<emoji code>: [<names>, canonical first]}}` for every
 * Unicode emoji the server accepts. Public and without credentials, like
 * Zulip's static files. The JSON (a few hundred KB) is built on the first
 * request and kept; its ETag lets clients revalidate a cached copy for free
 * (it changes only with the server's emoji data, that is with an upgrade).
 */
export function emojiDataRouter(codeToNames: () => Record<string, string[]>): Router {
  let cached: { body: Buffer; etag: string } | undefined;
  const document = () => {
    if (!cached) {
      const body = Buffer.from(JSON.stringify({ code_to_names: codeToNames() }));
      cached = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    return cached;
  };
  const router = Router();
  router.get(EMOJI_DATA_PATH, (req: Request, res: Response) => {
    const { body, etag } = document();
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.headers['if-none-match'] === etag) {
      res.status(304).end();
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', String(body.length));
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  return router;
}
