/**
 * JSON text already encoded, standing for a value of type `T` (ADR 0056).
 * The serializers of the two reads clients make most — a page of messages
 * and a channel's topic list — keep the encoded text of what does not
 * change between requests beside the cached value, and a response splices
 * it in instead of building and encoding the same objects again. `T` is
 * only a type: it says what the text decodes to, so a handler returning
 * `EncodedJson<Schema<'Message'>[]>` for `messages` is checked against
 * the contract as the objects were.
 *
 * Only the serializers make these, from values of type `T` (the encoders
 * are tested against the object serializers they stand for); the pipeline
 * writes them (`encodeReply`).
 */
export class EncodedJson<T> {
  /** Never set: carries `T` for the type checker. */
  declare readonly decodesTo?: T;

  /**
   * The text, or its UTF-8 bytes: text kept for many requests (a channel's
   * topic list) is kept as bytes, so that no response encodes it again.
   */
  constructor(readonly text: string | Buffer) {}

  /**
   * Only a reply's top-level fields are spliced (`encodeReply`); one deeper
   * in would be written as `{"text": …}`, which no schema check would
   * catch where responses are not validated. It fails loudly instead.
   */
  toJSON(): never {
    throw new Error('EncodedJson below the top level of a reply: only top-level fields are spliced');
  }
}

/**
 * Encoded text kept beside the value it encodes, one text per variant
 * (a content format, a way of naming the empty topic, an avatar URL). The
 * owner is a cached object that is replaced, never changed, when what it
 * stands for changes, so its texts are invalidated exactly as it is and
 * live only as long as it (a `WeakMap` holds them).
 */
export function keptTexts<Owner extends object, Text extends string | Buffer = string>(): (
  owner: Owner,
  variant: string,
  encode: () => Text,
) => Text {
  const kept = new WeakMap<Owner, Map<string, Text>>();
  return (owner, variant, encode) => {
    let texts = kept.get(owner);
    if (!texts) kept.set(owner, (texts = new Map()));
    let text = texts.get(variant);
    if (text === undefined) texts.set(variant, (text = encode()));
    return text;
  };
}

/** A JSON array of encoded elements. */
export const encodedList = <T>(elements: readonly string[]): EncodedJson<T[]> => new EncodedJson<T[]>(`[${elements.join(',')}]`);

/** The members of an object's encoding, without its braces (to splice into another object's). */
export function encodedMembers(value: object): string {
  const text = JSON.stringify(value);
  return text.length === 2 ? '' : text.slice(1, -1);
}

/** A value of type T, or its encoding: what a reply's field may be. */
export type MaybeEncoded<T> = T | EncodedJson<T>;

/**
 * A response body's JSON in parts: JSON.stringify's text, with each
 * top-level member that is an EncodedJson spliced in as it is, kept bytes
 * (a long topic list) as a part of their own between two texts. One text
 * when nothing is spliced. The splice is top-level only, which is where
 * the serializers put it (`messages`, `topics`).
 */
export function replyParts(body: Record<string, unknown>): Array<string | Buffer> {
  let spliced = false;
  for (const key in body) if (body[key] instanceof EncodedJson) spliced = true;
  if (!spliced) return [JSON.stringify(body)];
  // Text around the kept bytes, which are copied as they are rather than decoded and encoded again.
  const parts: Array<string | Buffer> = [];
  let text = '{';
  let first = true;
  for (const key in body) {
    const value = body[key];
    if (value === undefined || typeof value === 'function') continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (!(value instanceof EncodedJson)) text += JSON.stringify(value);
    else if (typeof value.text === 'string') text += value.text;
    else {
      parts.push(text, value.text);
      text = '';
    }
  }
  parts.push(text + '}');
  return parts;
}

/** The bytes of a reply's parts (`replyParts`): encoded once, for both its length and its body (sendJson). */
export function joinReply(parts: ReadonlyArray<string | Buffer>): Buffer {
  const chunks = replyChunks(parts);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * A reply's parts as buffers, to be written one after another (sendJson):
 * kept bytes go out as they are. Joined into one buffer instead, each reply
 * around a long kept list was a copy of it, allocated outside V8's heap:
 * 121 KB a topic list, and at a thousand lists a second V8 answered that
 * much outside memory with a full collection every half second, the 1m
 * topic list's p99 (22 mark-compacts in 10 s, measured). The text parts are
 * small and come from Node's buffer pool.
 */
export function replyChunks(parts: ReadonlyArray<string | Buffer>): Buffer[] {
  return parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p));
}

/** A response body's bytes (`replyParts`, joined). */
export const encodeReply = (body: Record<string, unknown>): Buffer => joinReply(replyParts(body));

/**
 * The kept bytes of a reply's parts, when it splices exactly one such
 * field, and the text around them, which with the bytes is the whole reply
 * (src/http/kept-gzip.ts keeps one compressed reply per pair). A NUL
 * marks the bytes' place: it cannot occur in JSON text.
 */
export function keptBytesOf(parts: ReadonlyArray<string | Buffer>): { bytes: Buffer; around: string } | undefined {
  const [before, bytes, after] = parts;
  if (parts.length !== 3 || !Buffer.isBuffer(bytes)) return undefined;
  return { bytes, around: `${String(before)}\0${String(after)}` };
}
