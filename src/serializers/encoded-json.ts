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
 * A response body's bytes: JSON.stringify's, with each top-level member
 * that is an EncodedJson spliced in as it is. The splice is top-level
 * only, which is where the serializers put it (`messages`, `topics`).
 * Encoded once, for both its length and its bytes (sendJson).
 */
export function encodeReply(body: Record<string, unknown>): Buffer {
  let spliced = false;
  for (const key in body) if (body[key] instanceof EncodedJson) spliced = true;
  if (!spliced) return Buffer.from(JSON.stringify(body), 'utf8');
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
  text += '}';
  if (parts.length === 0) return Buffer.from(text, 'utf8');
  parts.push(text);
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

/**
 * The kept bytes a reply splices (a long topic list), when it splices
 * exactly one such field, and what the reply says around them: the other
 * members' encoding, which with the bytes determines the whole reply
 * (src/http/kept-gzip.ts keeps one compressed reply per pair).
 */
export function keptBytesOf(body: Record<string, unknown>): { bytes: Buffer; around: string } | undefined {
  let bytes: Buffer | undefined;
  for (const key in body) {
    const value = body[key];
    if (value instanceof EncodedJson && typeof value.text !== 'string') {
      if (bytes) return undefined;
      bytes = value.text;
    }
  }
  if (!bytes) return undefined;
  let around = '';
  for (const key in body) {
    const value = body[key];
    if (value === undefined || typeof value === 'function') continue;
    // The kept field's place, by name: a NUL cannot occur in JSON text outside a string's escapes.
    around += `${JSON.stringify(key)}:${value instanceof EncodedJson ? (typeof value.text === 'string' ? value.text : '\0') : JSON.stringify(value)},`;
  }
  return { bytes, around };
}
