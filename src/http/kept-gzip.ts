import zlib from 'node:zlib';
import type { Request } from 'express';
import { encodeReply, keptBytesOf } from '../serializers/encoded-json';

/**
 * gzip for replies built around kept bytes (a channel's topic list, ADR
 * 0056), for the clients that ask for it: every Zulip app and library
 * sends `Accept-Encoding: gzip`, and Zulip's own front end (nginx)
 * compresses JSON replies for them. A busy channel's list is thousands of
 * topics, some 200 KB, that every app fetches when the channel is opened;
 * gzipped it is a fifth of that on the wire, which the server writes and
 * the client reads.
 *
 * Only kept bytes are compressed, and each once: the compressed reply is
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
 * `ignored_parameters_unsupported`): a few shapes are kept, any further
 * ones go uncompressed rather than growing without bound.
 */
const SHAPES_PER_LIST = 4;

/** zlib's default: made once per list, off the event loop, so the smaller body is worth the time. */
const LEVEL = 6;

/**
 * A reply's bytes, gzipped when the request accepts gzip and the gzip of
 * this reply is ready; else encoded as they are (`encodeReply`), and the
 * gzip started when the reply is around kept bytes. Sets `Vary:
 * Accept-Encoding` on every reply that may be compressed, so a cache
 * between never hands one client's encoding to another.
 */
export function replyBytes(
  req: Request,
  res: { setHeader(name: string, value: string): unknown },
  body: Record<string, unknown>,
): { bytes: Buffer; gzip: boolean } {
  const kept = keptBytesOf(body);
  if (!kept) return { bytes: encodeReply(body), gzip: false };
  res.setHeader('Vary', 'Accept-Encoding');
  // No header is "any encoding" in HTTP, but a client that names none (curl, a script)
  // expects the bytes as they are; nginx compresses only for a client that names gzip.
  if (!req.headers['accept-encoding'] || req.acceptsEncodings('gzip') !== 'gzip') return { bytes: encodeReply(body), gzip: false };
  let shapes = compressed.get(kept.bytes);
  if (!shapes) compressed.set(kept.bytes, (shapes = new Map()));
  const found = shapes.get(kept.around);
  if (found !== undefined && found !== 'making') return { bytes: found, gzip: true };
  const bytes = encodeReply(body);
  if (found === undefined && shapes.size < SHAPES_PER_LIST) {
    const made = shapes;
    made.set(kept.around, 'making');
    zlib.gzip(bytes, { level: LEVEL }, (err, gz) => {
      if (err) made.delete(kept.around);
      else made.set(kept.around, gz);
    });
  }
  return { bytes, gzip: false };
}
