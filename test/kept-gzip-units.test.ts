import type { Request } from 'express';
import { replyBytes } from '../src/http/kept-gzip';
import { EncodedJson } from '../src/serializers/encoded-json';

/**
 * The kept bytes are written as they are, between the text around them:
 * never copied into a reply-sized buffer per request (`replyChunks`), which
 * outside V8's heap drove a full collection every half second under load.
 */
describe('a reply around kept bytes', () => {
  it('is written in chunks, the kept bytes themselves among them', () => {
    const kept = Buffer.from(JSON.stringify([{ name: 'a', max_id: 1 }]));
    const body = { result: 'success', msg: '', topics: new EncodedJson(kept) };
    const plain = { headers: {} } as unknown as Request;
    const { chunks, gzip } = replyBytes(plain, { setHeader: () => undefined }, body);
    expect(gzip).toBe(false);
    expect(chunks).toHaveLength(3);
    expect(chunks[1]).toBe(kept);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify({ result: 'success', msg: '', topics: [{ name: 'a', max_id: 1 }] }));
  });
});
