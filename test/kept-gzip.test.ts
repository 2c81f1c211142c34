import http from 'node:http';
import zlib from 'node:zlib';
import { eachDatabase } from './support/databases';
import { sendToChannel } from './support/events';
import { listen } from './support/fuzz/wire';
import { createChannel, startTestServer, type TestServer } from './support/server';

interface Reply {
  headers: http.IncomingHttpHeaders;
  /** The bytes as they came, compressed or not. */
  raw: Buffer;
  /** The Content-Length header, as a number. */
  length: number;
  /** The JSON text, decompressed when it came gzipped. */
  json: string;
}

/**
 * A long topic list (kept as bytes, src/serializers/topic-summaries.ts)
 * goes gzipped to a client that asks for gzip (src/http/kept-gzip.ts),
 * over real HTTP with the bytes as they are on the wire.
 */
eachDatabase('a kept topic list, gzipped for clients that ask', (dialect) => {
  let t: TestServer;
  let server: { port: number; close(): Promise<void> };
  let busy: { id: number };
  let quiet: { id: number };
  const topicName = (i: number) => `a topic long enough that sixty of them make a kept list ${String(i).padStart(3, '0')}`.slice(-60);

  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, member } = t.cast;
    busy = await createChannel(t, 'busy', [owner, member]);
    quiet = await createChannel(t, 'quiet', [owner, member]);
    for (let i = 0; i < 80; i++) await sendToChannel(t, owner, 'busy', topicName(i), 'hello');
    await sendToChannel(t, owner, 'quiet', 'only topic', 'hello');
    server = await listen(t.app);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  const get = (path: string, headers: Record<string, string>): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const { email, api_key } = t.cast.member;
      const auth = 'Basic ' + Buffer.from(`${email}:${api_key}`).toString('base64');
      const req = http.get(
        { host: '127.0.0.1', port: server.port, path, agent: false, headers: { authorization: auth, ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const raw = Buffer.concat(chunks);
            expect(Number(res.headers['content-length'])).toBe(raw.length);
            const json = (res.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw).toString('utf8');
            resolve({ headers: res.headers, raw, length: Number(res.headers['content-length']), json });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
    });

  /** Asks with gzip until the reply comes gzipped (it is made off the event loop after the first ask). */
  const gzipped = async (path: string, accept = 'gzip, deflate, br'): Promise<Reply> => {
    for (let i = 0; i < 100; i++) {
      const r = await get(path, { 'accept-encoding': accept });
      if (r.headers['content-encoding'] === 'gzip') return r;
      await new Promise((res) => setTimeout(res, 20));
    }
    throw new Error(`${path}: never gzipped`);
  };

  const topicsOf = (r: Reply) => (JSON.parse(r.json) as { topics: Array<{ name: string; max_id: number }> }).topics;

  it('is the same JSON as the plain reply, a fraction of its bytes, with Vary: Accept-Encoding', async () => {
    const path = `/api/v1/users/me/${busy.id}/topics`;
    const plain = await get(path, {});
    const gz = await gzipped(path);
    expect(gz.json).toBe(plain.raw.toString('utf8'));
    expect(topicsOf(gz)).toHaveLength(80);
    expect(gz.raw.length).toBeLessThan(plain.raw.length / 3);
    expect(plain.headers['content-encoding']).toBeUndefined();
    for (const r of [plain, gz]) {
      expect(r.headers.vary).toMatch(/Accept-Encoding/i);
      expect(r.length).toBe(r.raw.length);
    }
    // `*` accepts any encoding, gzip among them.
    expect((await gzipped(path, '*')).json).toBe(plain.raw.toString('utf8'));
  });

  it('keeps a gzip per reply shape: a reply that names an ignored parameter gets its own', async () => {
    const path = `/api/v1/users/me/${busy.id}/topics`;
    const usual = await gzipped(path);
    const odd = await gzipped(`${path}?not_a_parameter=1`);
    expect(JSON.parse(odd.json)).toMatchObject({ ignored_parameters_unsupported: ['not_a_parameter'] });
    expect(JSON.parse(usual.json)).not.toHaveProperty('ignored_parameters_unsupported');
    // A new list (after a send) asked for in four odd shapes first: the usual one still gets its
    // gzip, replacing the oldest, rather than being refused for want of room.
    await sendToChannel(t, t.cast.owner, 'busy', topicName(3), 'a new list');
    for (const name of ['a', 'b', 'c', 'd']) await gzipped(`${path}?${name}=1`);
    expect(topicsOf(await gzipped(path))).toHaveLength(80);
  });

  it('goes as it is to a client that names no gzip, or refuses it', async () => {
    const path = `/api/v1/users/me/${busy.id}/topics`;
    await gzipped(path);
    const asked: Array<Record<string, string>> = [
      {},
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'gzip;q=0, identity' },
      { 'accept-encoding': 'br' },
    ];
    for (const headers of asked) {
      const r = await get(path, headers);
      expect([headers, r.headers['content-encoding']]).toEqual([headers, undefined]);
      expect(topicsOf(r)).toHaveLength(80);
    }
  });

  it('is never older than the list: after a send, the reply lists the new message, gzipped again', async () => {
    const path = `/api/v1/users/me/${busy.id}/topics`;
    await gzipped(path);
    const id = await sendToChannel(t, t.cast.owner, 'busy', topicName(7), 'again');
    // Whatever comes first after the send, plain while the new list is compressed or gzipped, lists it.
    const first = await get(path, { 'accept-encoding': 'gzip' });
    expect(topicsOf(first).find((x) => x.name === topicName(7))?.max_id).toBe(id);
    const gz = await gzipped(path);
    expect(topicsOf(gz).find((x) => x.name === topicName(7))?.max_id).toBe(id);
    expect(topicsOf(gz)[0]).toEqual({ name: topicName(7), max_id: id });
  });

  it('leaves a short list alone: it is not kept as bytes, and not worth compressing', async () => {
    const r = await get(`/api/v1/users/me/${quiet.id}/topics`, { 'accept-encoding': 'gzip' });
    await new Promise((res) => setTimeout(res, 100));
    const again = await get(`/api/v1/users/me/${quiet.id}/topics`, { 'accept-encoding': 'gzip' });
    for (const x of [r, again]) expect([x.headers['content-encoding'], x.headers.vary]).toEqual([undefined, undefined]);
    expect(topicsOf(again)).toEqual([{ name: 'only topic', max_id: expect.any(Number) }]);
  });
});
