import zlib from 'node:zlib';
import type { Request } from 'express';
import { joinReply, keptBytesOf, replyChunks, replyParts } from '../serializers/encoded-json';

/**
 * gzip for replies built around kept bytes (a channel's topic list, ADR
 * 0056), for the clients that ask for it: every Zulip app and library
 * sends `Accept-Encoding: gzip`, and Zulip's own front end (nginx)
 * compresses JSON replies for them. A busy channel's list is thousands of
 * topics (121 KB at 2,966 topics), that every app fetches when the channel
 * is opened; gzipped it is a quarter of that on the wire.
 *
 * Only kept bytes are compressed, once per list and reply shape (a send
 * to the channel makes a new list, so a busy channel's is compressed again
 * after each send, about 2 ms on the thread pool): the compressed reply is
 * kept beside the bytes it was made from (a WeakMap on them), so an
 * invalidation that replaces the list drops it too, and a reply is never
 * older than the list. It is made on libuv's thread pool: no request waits
 * for it, and the replies asked for while it is made go uncompressed.
 * Other replies are not compressed here: each would cost its own CPU on
 * the event loop (a proxy in front may compress them, as nginx does for
 * Zulip).
 */
const compressed = new WeakMap<Buffer, Map<string, Buffer | 'making'>>();

/**
 * Replies of one list differ only in what surrounds it (the envelope, an
 * `ignored_parameters_unsupported` naming whatever a client sent): a few
 * shapes are kept, a further one replacing the oldest, so that odd
 * requests neither grow the map nor leave the usual reply uncompressed.
 */
const SHAPES_PER_LIST = 4;

/** zlib's default: made once per list, off the event loop, so the smaller body is worth the time. */
const LEVEL = 6;

/**
 * A reply's bytes, as chunks to write in order (never joined: see
 * `replyChunks`): gzipped, one chunk, when the request accepts gzip and the
 * gzip of this reply is ready; else as they are (`replyParts`), and the gzip
 * started when the reply is around kept bytes. Sets `Vary: Accept-Encoding`
 * on every reply that may be compressed, so a cache between never hands one
 * client's encoding to another.
 */
export function replyBytes(
  req: Request,
  res: { setHeader(name: string, value: string): unknown },
  body: Record<string, unknown>,
): { chunks: Buffer[]; gzip: boolean } {
  const parts = replyParts(body);
  const kept = keptBytesOf(parts);
  if (!kept) return { chunks: replyChunks(parts), gzip: false };
  res.setHeader('Vary', 'Accept-Encoding');
  // No header is "any encoding" in HTTP, but a client that sends none (curl, a script)
  // expects the bytes as they are, and nginx leaves it so. A header naming gzip, or `*`
  // without refusing gzip, accepts it.
  if (!req.headers['accept-encoding'] || req.acceptsEncodings('gzip') !== 'gzip') return { chunks: replyChunks(parts), gzip: false };
  let shapes = compressed.get(kept.bytes);
  if (!shapes) compressed.set(kept.bytes, (shapes = new Map()));
  const found = shapes.get(kept.around);
  if (found !== undefined && found !== 'making') return { chunks: [found], gzip: true };
  if (found === undefined) {
    if (shapes.size >= SHAPES_PER_LIST) shapes.delete(shapes.keys().next().value!);
    const made = shapes;
    made.set(kept.around, 'making');
    // Joined once, for zlib, per list and shape.
    zlib.gzip(joinReply(parts), { level: LEVEL }, (err, gz) => {
      // A shape replaced meanwhile stays out: the map never holds more than SHAPES_PER_LIST.
      if (made.get(kept.around) !== 'making') return;
      if (err) made.delete(kept.around);
      else made.set(kept.around, gz);
    });
  }
  return { chunks: replyChunks(parts), gzip: false };
}
