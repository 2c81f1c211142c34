import zlib from 'node:zlib';
import { eachDatabase } from './support/databases';
import { snapshotDigest } from './support/db-snapshot';
import { startRawServer, type RawRequest, type RawResponse, type RawServer } from './support/raw-http';
import { createChannel, startTestServer, type TestServer } from './support/server';

/**
 * Malformed requests, one per class of hostile input the pipeline must
 * refuse: each answer is a Zulip error body with a 4xx status and exact
 * wording, the database is unchanged, and the server keeps answering. The
 * property-based fuzzer (test/fuzz) covers the same ground at random; these
 * are the readable reproducers.
 */
eachDatabase('hostile input', (dialect) => {
  let t: TestServer;
  let raw: RawServer;
  let general: { id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    raw = await startRawServer(t.app);
    general = await createChannel(t, 'general', [t.cast.owner, t.cast.member]);
    for (const content of ['one', 'two', 'three']) {
      const sent = await t.api.post('/messages', t.cast.owner, { type: 'stream', to: 'general', topic: 'greetings', content });
      expect(sent.status).toBe(200);
    }
  });
  afterAll(async () => {
    await raw.close();
    await t.close();
  });

  const member = () => t.cast.member;
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const call = (req: RawRequest) => raw.request({ user: member(), ...req });
  const error = (res: RawResponse) => [res.status, res.body];
  const zulipError = (status: number, msg: string, code = 'BAD_REQUEST') => [status, { result: 'error', msg, code }];

  /** Runs hostile requests and checks that none of them changed the database. */
  async function unchanged(work: () => Promise<void>): Promise<void> {
    const before = await snapshotDigest(t.ctx.db);
    await work();
    expect(await snapshotDigest(t.ctx.db)).toEqual(before);
  }

  describe('body decoding', () => {
    it("never hands a GET's form body to the handler: its parameters are the query string", async () => {
      const res = await call({
        method: 'GET',
        path: '/api/v1/messages?anchor=newest&num_before=1&num_after=0',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(form({ num_before: 'many', anchor: '{}', narrow: '[{"operator":"channel","operand":{}}]' })),
      });
      expect(res.status).toBe(200);
      expect((res.body as { messages: unknown[] }).messages).toHaveLength(1);
    });

    const sendForm = form({ type: 'stream', to: 'general', topic: 'greetings', content: 'compressed' });

    it('reads a well-formed gzip, deflate or br form body', async () => {
      for (const [encoding, compress] of [
        ['gzip', zlib.gzipSync],
        ['deflate', zlib.deflateSync],
        ['br', zlib.brotliCompressSync],
      ] as const) {
        const res = await call({
          method: 'POST',
          path: '/api/v1/messages',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': encoding },
          body: compress(Buffer.from(sendForm)),
        });
        expect([encoding, res.status]).toEqual([encoding, 200]);
      }
    });

    it('answers garbage or truncated compressed bodies with 400, on POST and GET alike', async () => {
      await unchanged(async () => {
        const truncated = zlib.gzipSync(Buffer.from(sendForm)).subarray(0, 20);
        for (const [method, path, encoding, body] of [
          ['POST', '/api/v1/messages', 'gzip', Buffer.from('garbage')],
          ['GET', '/api/v1/users/me', 'gzip', Buffer.from('garbage')],
          ['POST', '/api/v1/messages', 'gzip', truncated],
          ['POST', '/api/v1/messages', 'deflate', Buffer.from('garbage')],
          ['POST', '/api/v1/messages', 'br', Buffer.from('garbage garbage')],
        ] as const) {
          const res = await call({
            method,
            path,
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': encoding },
            body,
          });
          expect([method, encoding, ...error(res)]).toEqual([method, encoding, ...zulipError(400, 'Malformed request body')]);
        }
      });
    });

    it('refuses an unknown Content-Encoding and an unsupported charset with 415', async () => {
      await unchanged(async () => {
        const encoded = await call({
          method: 'POST',
          path: '/api/v1/messages',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'zstd' },
          body: sendForm,
        });
        expect(error(encoded)).toEqual(zulipError(415, 'Unsupported Content-Encoding'));
        const charset = await call({
          method: 'POST',
          path: '/api/v1/messages',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=ebcdic' },
          body: sendForm,
        });
        expect(error(charset)).toEqual(zulipError(415, 'Unsupported charset: ebcdic'));
      });
    });

    it('bounds a compressed body after decompression (413), and refuses too many form fields (413)', async () => {
      await unchanged(async () => {
        const bomb = zlib.gzipSync(Buffer.from(`content=${'a'.repeat(6 * 1024 * 1024)}`));
        expect(bomb.length).toBeLessThan(100_000);
        const inflated = await call({
          method: 'POST',
          path: '/api/v1/messages',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'gzip' },
          body: bomb,
        });
        expect(error(inflated)).toEqual(zulipError(413, 'Request body is too large'));
        const fields = Array.from({ length: 1001 }, (_, i) => `f${i}=1`).join('&');
        const many = await call({
          method: 'POST',
          path: '/api/v1/messages',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: fields,
        });
        expect(error(many)).toEqual(zulipError(413, 'Request body is too large'));
      });
    });
  });

  describe('multipart', () => {
    const part = (name: string, value: string) => `--XX\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const multipart = (body: string, type = 'multipart/form-data; boundary=XX') =>
      call({ method: 'POST', path: '/api/v1/messages', headers: { 'Content-Type': type }, body });

    it('reads a well-formed multipart body', async () => {
      const body =
        part('type', 'stream') + part('to', 'general') + part('topic', 'greetings') + part('content', 'multipart') + '--XX--\r\n';
      expect((await multipart(body)).status).toBe(200);
    });

    it.each([
      ['no boundary', 'x', 'multipart/form-data', 'Malformed multipart body'],
      ['a truncated form', '--XX\r\nContent-Disposition: form-data; name="content"\r\n\r\nhello', undefined, 'Malformed multipart body'],
      [
        'a part without a name',
        '--XX\r\nContent-Disposition: form-data\r\n\r\nhello\r\n--XX--\r\n',
        undefined,
        'Malformed multipart body: a part has no name',
      ],
      [
        'a header line without a colon',
        '--XX\r\nContent-Disposition: form-data; name="content"\r\nbroken\r\n\r\nhello\r\n--XX--\r\n',
        undefined,
        'Malformed multipart body',
      ],
      [
        'an oversized part header',
        `--XX\r\nContent-Disposition: form-data; name="content"\r\nX-Big: ${'a'.repeat(200_000)}\r\n\r\nhello\r\n--XX--\r\n`,
        undefined,
        'Malformed multipart body',
      ],
      [
        'a NUL in a field name',
        '--XX\r\nContent-Disposition: form-data; name="con\0tent"\r\n\r\nhello\r\n--XX--\r\n',
        undefined,
        'Malformed multipart body',
      ],
    ])('answers %s with 400', async (_what, body, type, msg) => {
      await unchanged(async () => {
        expect(error(await multipart(body, type))).toEqual(zulipError(400, msg));
      });
    });

    it('bounds the fields of a multipart body as a whole (413)', async () => {
      await unchanged(async () => {
        const body = Array.from({ length: 6 }, (_, i) => part(`f${i}`, 'a'.repeat(1024 * 1024))).join('') + '--XX--\r\n';
        expect(error(await multipart(body))).toEqual(zulipError(413, 'Request body is too large'));
      });
    });

    it('refuses a compressed multipart body with 415', async () => {
      const res = await call({
        method: 'POST',
        path: '/api/v1/messages',
        headers: { 'Content-Type': 'multipart/form-data; boundary=XX', 'Content-Encoding': 'gzip' },
        body: zlib.gzipSync(Buffer.from(part('content', 'x') + '--XX--\r\n')),
      });
      expect(error(res)).toEqual(zulipError(415, 'Content-Encoding is not supported for multipart bodies'));
    });
  });

  describe('paths', () => {
    it.each([
      ['/api/v1/messages/%FF', 'Invalid message_id'],
      // Not digits, so the email form of the route (GET /users/{email}) takes it.
      ['/api/v1/users/%', 'Invalid email'],
      ['/api/v1/messages/%E2%82', 'Invalid message_id'],
    ])('answers the malformed escape in %s with 400', async (path, msg) => {
      expect(error(await call({ method: 'GET', path }))).toEqual(zulipError(400, msg));
    });

    it('decodes the path before reading the body or authenticating', async () => {
      const res = await raw.request({ method: 'POST', path: '/api/v1/messages/%E2%82/reactions', user: null });
      expect(error(res)).toEqual(zulipError(400, 'Invalid message_id'));
    });
  });

  describe('prototype keys', () => {
    const fetchNarrow = (narrow: unknown) =>
      call({
        method: 'GET',
        path: `/api/v1/messages?${form({ anchor: 'newest', num_before: '10', num_after: '0', narrow: JSON.stringify(narrow) })}`,
      });

    it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
      'refuses the narrow operator %s instead of ignoring it',
      async (operator) => {
        const res = await fetchNarrow([{ operator, operand: 'x' }]);
        expect(error(res)).toEqual(zulipError(400, `Invalid narrow operator: unknown operator ${operator}`, 'BAD_NARROW'));
      },
    );

    it.each(['__proto__', 'constructor', 'toString'])('refuses has:%s', async (operand) => {
      const res = await fetchNarrow([['has', operand]]);
      expect(error(res)).toEqual(zulipError(400, `Invalid narrow operator: unknown 'has' operand ${operand}`, 'BAD_NARROW'));
    });

    it('marks nothing read for a flags narrow whose operator is a prototype key', async () => {
      await unchanged(async () => {
        const res = await call({
          method: 'POST',
          path: '/api/v1/messages/flags/narrow',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: form({
            anchor: 'newest',
            num_before: '100',
            num_after: '0',
            op: 'add',
            flag: 'read',
            narrow: JSON.stringify([{ operator: 'constructor', operand: 'general' }]),
          }),
        });
        expect(error(res)).toEqual(zulipError(400, 'Invalid narrow operator: unknown operator constructor', 'BAD_NARROW'));
      });
    });

    it('calls a flag named constructor invalid', async () => {
      const res = await call({
        method: 'POST',
        path: '/api/v1/messages/flags',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: form({ messages: '[1]', op: 'add', flag: 'constructor' }),
      });
      expect(error(res)).toEqual(zulipError(400, "Invalid flag: 'constructor'"));
    });
  });

  describe('huge numbers', () => {
    const digits = '9'.repeat(400);

    it.each([
      ['a message id of 400 digits', `/api/v1/messages/${digits}`, 'message_id is too large'],
      ['a user id of 400 digits', `/api/v1/users/${digits}`, 'user_id is too large'],
      ['a negative message id of 400 digits', `/api/v1/messages/-${digits}`, 'message_id is too small'],
      ['a group id of 400 digits', `/api/v1/user_groups/${digits}/members/1`, 'user_group_id is too large'],
      ['a num_before of 400 digits', `/api/v1/messages?anchor=newest&num_before=${digits}&num_after=0`, 'num_before is too large'],
      ['a negative message_ids entry', `/api/v1/messages?message_ids=${encodeURIComponent('[-1]')}`, 'message_ids[0] is too small'],
    ])('refuses %s out of range', async (_what, path, msg) => {
      expect(error(await call({ method: 'GET', path }))).toEqual(zulipError(400, msg));
    });

    it.each([
      ['[1e400]', 'messages[0] is not an integer'],
      [`[${2 ** 53 + 2}]`, 'messages[0] is too large'],
      ['[-1]', 'messages[0] is too small'],
    ])('refuses the JSON number in messages=%s', async (list, msg) => {
      const res = await call({
        method: 'POST',
        path: '/api/v1/messages/flags',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: form({ messages: list, op: 'add', flag: 'read' }),
      });
      expect(error(res)).toEqual(zulipError(400, msg));
    });

    it.each([
      ['[null]', 'message_ids[0] is not an integer'],
      ['[true,1]', 'message_ids[0] is not an integer'],
      ['["1"]', 'message_ids[0] is not an integer'],
    ])('refuses message_ids=%s instead of coercing it', async (list, msg) => {
      const res = await call({ method: 'GET', path: `/api/v1/messages?message_ids=${encodeURIComponent(list)}` });
      expect(error(res)).toEqual(zulipError(400, msg));
    });

    it('clamps an anchor of hundreds of digits to the newest message, as Zulip does', async () => {
      const res = await call({ method: 'GET', path: `/api/v1/messages?anchor=${digits}&num_before=1&num_after=0` });
      expect(res.status).toBe(200);
      expect(res.body.anchor).toBe(10_000_000_000_000_000);
      expect(res.body.messages).toHaveLength(1);
    });
  });

  describe('unbounded lists', () => {
    const ids = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i + 1));
    const post = (path: string, fields: Record<string, string>, method = 'POST') =>
      call({ method, path: `/api/v1${path}`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form(fields) });

    it('refuses 100,000 typing recipients and invitation group ids by the contract', async () => {
      await unchanged(async () => {
        expect(error(await post('/typing', { op: 'start', to: ids(100_000) }))).toEqual(zulipError(400, 'to has too many items'));
        const invite = await raw.request({
          user: t.cast.admin,
          method: 'POST',
          path: '/api/v1/invites/multiuse',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: form({ group_ids: ids(100_000) }),
        });
        expect(error(invite)).toEqual(zulipError(400, 'group_ids has too many items'));
      });
    });

    it('refuses a narrow of 1,000 terms', async () => {
      const narrow = JSON.stringify(Array.from({ length: 1000 }, () => ({ operator: 'search', operand: 'x' })));
      const res = await post('/messages/flags/narrow', {
        anchor: 'newest',
        num_before: '10',
        num_after: '0',
        op: 'add',
        flag: 'read',
        narrow,
      });
      expect(error(res)).toEqual(zulipError(400, 'narrow has too many items'));
    });

    it('refuses a narrow operand of more than 25,000 characters, in either form of term', async () => {
      const flags = (narrow: unknown) =>
        post('/messages/flags/narrow', {
          anchor: 'newest',
          num_before: '10',
          num_after: '0',
          op: 'add',
          flag: 'read',
          narrow: JSON.stringify(narrow),
        });
      await unchanged(async () => {
        const long = '\uFDFA'.repeat(25_001);
        for (const narrow of [[{ operator: 'search', operand: long }], [['search', long]]]) {
          const res = await flags(narrow);
          expect([res.status, JSON.parse(res.text).code]).toEqual([400, 'BAD_REQUEST']);
        }
      });
      expect((await flags([{ operator: 'search', operand: 'x'.repeat(25_000) }])).status).toBe(200);
    });

    it('refuses 5,001 message_ids in a GET that fits the header limit', async () => {
      const res = await call({ method: 'GET', path: `/api/v1/messages?message_ids=${encodeURIComponent(ids(5001))}` });
      expect(error(res)).toEqual(zulipError(400, 'message_ids has too many items'));
    });

    it('refuses 20,000 channel names to unsubscribe, and lists at most ten unknown ones', async () => {
      await unchanged(async () => {
        const names = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `no-such-channel-${i}`));
        expect(error(await post('/users/me/subscriptions', { subscriptions: names(20_000) }, 'DELETE'))).toEqual(
          zulipError(400, 'subscriptions has too many items'),
        );
        const res = await post('/users/me/subscriptions', { subscriptions: names(1000) }, 'DELETE');
        const shown = Array.from({ length: 10 }, (_, i) => `no-such-channel-${i}`).join(', ');
        expect(error(res)).toEqual(zulipError(400, `Channel(s) (${shown} and 990 more) do not exist`));
      });
    });

    it("bounds an error that names the client's own 1 MB key", async () => {
      const key = 'k'.repeat(1_000_000);
      const res = await post('/register', { client_capabilities: JSON.stringify({ [key]: {} }) });
      expect(res.status).toBe(400);
      const body = JSON.parse(res.text);
      expect([body.result, body.code, body.msg.length <= 1001, body.msg.startsWith('client_capabilities')]).toEqual([
        'error',
        'BAD_REQUEST',
        true,
        true,
      ]);
    });

    it('bounds a comma-separated recipient string as the contract bounds the list', async () => {
      const to = Array.from({ length: 1001 }, (_, i) => `u${i}@example.com`).join(',');
      const res = await post('/messages', { type: 'direct', to, content: 'hello' });
      expect(error(res)).toEqual(zulipError(400, 'Too many recipients (limit: 1000)'));
    });
  });

  describe('HTTP', () => {
    it('answers headers over the limit with a JSON 431', async () => {
      const res = await call({ method: 'GET', path: `/api/v1/users/me?x=${'a'.repeat(70 * 1024)}` });
      expect(error(res)).toEqual(zulipError(431, 'Request headers are too large'));
    });

    it('answers a request line that is not HTTP with a JSON 400', async () => {
      const reply = await raw.socket('NOT HTTP AT ALL\r\n\r\n');
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(reply).toContain('{"result":"error","msg":"Malformed HTTP request","code":"BAD_REQUEST"}');
    });

    it('answers a header line without a colon with a JSON 400', async () => {
      const reply = await raw.socket('GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n');
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(reply).toContain('{"result":"error","msg":"Malformed HTTP request","code":"BAD_REQUEST"}');
    });

    it('still answers normally after all of the above', async () => {
      const res = await call({ method: 'GET', path: '/api/v1/users/me' });
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(general.id).toBeGreaterThan(0);
    });
  });
});
