import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { emojiContentType, emojiKey, isEmojiKey } from '../domain/custom-emoji';
import { fileNotFound } from '../access/attachments';
import { sendStream } from './send-stream';

/**
 * Custom emoji images at Zulip's local-storage URLs,
 * /user_avatars/<realm>/emoji/images/<file> and …/images/still/<file>,
 * without credentials: Zulip serves them publicly too (they appear in
 * rendered messages and in every client's emoji picker). The request path is
 * mapped to a storage key whose shape is checked (digits, our hex file names
 * and known extensions only; a percent-escape never decodes here), so no
 * segment can climb out of the emoji area; deactivated emoji stay served, as old messages show them.
 */
export function emojiFileRouter(ctx: AppContext): Router {
  const router = Router();
  // Only the emoji area: other /user_avatars paths (avatars) go on to their own routes.
  router.get(/^\/[1-9][0-9]{0,9}\/emoji\/images\//, async (req: Request, res: Response) => {
    const m = /^\/([1-9][0-9]{0,9})\/emoji\/images\/((?:still\/)?[^/]+)$/.exec(req.path);
    const key = m ? emojiKey(Number(m[1]), m[2]!) : '';
    const type = emojiContentType(key);
    if (!m || !isEmojiKey(key) || key.endsWith('.original') || !type) throw fileNotFound();
    const stat = await ctx.storage.stat(key);
    const stream = stat && (await ctx.storage.read(key));
    if (!stat || !stream) throw fileNotFound();
    res.setHeader('Content-Type', type);
    res.setHeader('Content-Length', String(stat.size));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    // A file name is never reused for other bytes, so the image may be cached for good.
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    if (req.method === 'HEAD') {
      stream.destroy();
      res.end();
      return;
    }
    await sendStream(stream, res);
  });
  return router;
}
