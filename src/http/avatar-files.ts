import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { servedAvatarKey } from '../domain/avatars';
import { ApiError } from '../errors';
import { sendStream } from './send-stream';

const notFound = () => new ApiError('File not found.', 'BAD_REQUEST', 404);

/**
 * Uploaded avatars at /user_avatars/<realm_id>/<hash>.png (and
 * <hash>-medium.png), without credentials: avatars are public in Zulip, and
 * browsers load them in <img> tags that send none. The path must match the
 * one shape an avatar key has (checked before any file-system access, so no
 * escape, '..' or other file can be reached); each upload has a new name, so
 * a response may be cached for good.
 */
export function avatarFileRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/:realm/:file', async (req: Request, res: Response) => {
    const key = servedAvatarKey(String(req.params.realm), String(req.params.file));
    if (!key) throw notFound();
    const stat = await ctx.storage.stat(key);
    if (!stat) throw notFound();
    res.setHeader('Content-Type', 'image/png');
    res.setHeader('Content-Length', String(stat.size));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = await ctx.storage.read(key);
    if (!stream) throw notFound();
    await sendStream(stream, res);
  });
  router.use(() => {
    throw notFound();
  });
  return router;
}
