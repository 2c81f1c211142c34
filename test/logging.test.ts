import { Writable } from 'node:stream';
import request from 'supertest';
import { buildApp } from '../src/app';
import { createLogger } from '../src/logger';
import { createChannel, startTestServer, type TestServer } from './support/server';

/** Log lines as the process would write them to a pipe, kept for the test. */
function captured(pretty = false) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, log: createLogger('info', { destination: stream, pretty, colorize: false }) };
}

describe('logging', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
    await createChannel(t, 'general', [t.cast.member]);
  });
  afterAll(() => t.close());

  it('logs one JSON line per request with operation, caller, status and duration, and no secret', async () => {
    const { lines, log } = captured();
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log });
    const password = 'hunter2-very-secret';
    const member = t.cast.member;
    const res = await request(app)
      .post('/api/v1/messages')
      .auth(member.email, member.api_key)
      .type('form')
      .send({ type: 'stream', to: 'general', topic: 'logs', content: 'hello', password, api_key: member.api_key });
    expect(res.status).toBe(200);
    expect(res.body.ignored_parameters_unsupported).toEqual(['api_key', 'password']);

    const entries = lines.map((l) => JSON.parse(l) as Record<string, any>);
    const line = entries.find((e) => e.msg === 'request completed');
    expect(line).toMatchObject({
      operationId: 'send-message',
      userId: member.id,
      status: 200,
      req: { method: 'POST', url: '/api/v1/messages' },
    });
    expect(typeof line!.durationMs).toBe('number');
    expect(line!.durationMs).toBeGreaterThanOrEqual(0);
    const text = lines.join('\n');
    expect(text).toContain(String(member.id)); // the check below looks at the right lines
    expect(text).not.toContain(member.api_key);
    expect(text).not.toContain(password);
    expect(text).not.toContain(Buffer.from(`${member.email}:${member.api_key}`).toString('base64'));
    expect(text.toLowerCase()).not.toContain('authorization');
  });

  it('leaves long-polls out of the access log, but logs a failed one', async () => {
    const { lines, log } = captured();
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log });
    const member = t.cast.member;
    const reg = await request(app)
      .post('/api/v1/register')
      .auth(member.email, member.api_key)
      .type('form')
      .send({ event_types: '["message"]' });
    expect(reg.status).toBe(200);
    const poll = await request(app)
      .get('/api/v1/events')
      .query({ queue_id: reg.body.queue_id, last_event_id: -1, dont_block: 'true' })
      .auth(member.email, member.api_key);
    expect(poll.status).toBe(200);
    const bad = await request(app)
      .get('/api/v1/events')
      .query({ queue_id: 'no-such-queue', last_event_id: -1 })
      .auth(member.email, member.api_key);
    expect(bad.status).toBe(400);
    const entries = lines.map((l) => JSON.parse(l) as Record<string, any>);
    const done = entries.filter((e) => e.msg === 'request completed');
    expect(done.map((e) => [e.operationId, e.status])).toEqual([
      ['register-queue', 200],
      ['get-events', 400],
    ]);
    // The failed poll's line is the access log's: its request, its caller, its error.
    expect(done[1]).toMatchObject({
      req: { method: 'GET', url: expect.stringMatching(/^\/api\/v1\/events\?/) },
      userId: member.id,
      error: { code: 'BAD_EVENT_QUEUE_ID' },
    });
    expect(typeof done[1]!.reqId).toBe('string');
    expect(typeof done[1]!.durationMs).toBe('number');
  });

  it('replaces secrets a query string carries, and logs no user for an unauthenticated request', async () => {
    const { lines, log } = captured();
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log });
    const res = await request(app).get('/api/v1/users/me').query({ api_key: 'leaked-key-123', password: 'leaked-pass-456', other: 'kept' });
    expect(res.status).toBe(401);
    const line = lines.map((l) => JSON.parse(l) as Record<string, any>).find((e) => e.msg === 'request completed');
    expect(line).toMatchObject({ operationId: 'get-own-user', userId: null, status: 401 });
    expect(line!.req.url).toBe('/api/v1/users/me?api_key=[Redacted]&password=[Redacted]&other=kept');
    expect(lines.join('\n')).not.toMatch(/leaked-key-123|leaked-pass-456/);
  });

  it('redacts credentials in any logged object', () => {
    const { lines, log } = captured();
    log.info(
      { req: { headers: { authorization: 'Basic c2VjcmV0' } }, body: { password: 'pw-1' }, api_key: 'k-2', user: { api_key: 'k-3' } },
      'x',
    );
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!) as Record<string, any>;
    expect(entry).toMatchObject({
      req: { headers: { authorization: '[Redacted]' } },
      body: { password: '[Redacted]' },
      api_key: '[Redacted]',
      user: { api_key: '[Redacted]' },
    });
  });

  it("says each thing once in a JSON line, and a refused request's Zulip code and msg", async () => {
    const { lines, log } = captured();
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log });
    const member = t.cast.member;
    const res = await request(app)
      .get('/api/v1/messages')
      .auth(member.email, member.api_key)
      .query({ anchor: 'nowhere', num_before: 1, num_after: 0 });
    expect(res.status).toBe(400);
    const entries = lines.map((l) => JSON.parse(l) as Record<string, any>);
    expect(entries).toHaveLength(1);
    const line = entries[0]!;
    expect(line).toMatchObject({
      operationId: 'get-messages',
      userId: member.id,
      status: 400,
      error: { code: res.body.code, msg: res.body.msg },
    });
    expect(line.reqId).toBe(res.headers['x-request-id']);
    expect(line.req).toEqual({ method: 'GET', url: expect.stringMatching(/^\/api\/v1\/messages\?/) });
    expect(line).not.toHaveProperty('res');
  });

  it('writes one readable line per request at a terminal, with the code and msg of an error', async () => {
    const { lines, log } = captured(true);
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log });
    const member = t.cast.member;
    const ok = await request(app).get('/api/v1/users/me').auth(member.email, member.api_key);
    expect(ok.status).toBe(200);
    const refused = await request(app)
      .post('/api/v1/messages')
      .auth(member.email, member.api_key)
      .type('form')
      .send({ type: 'stream', to: 'no such channel', topic: 'x', content: 'x' });
    expect(refused.status).toBe(400);
    expect(lines).toHaveLength(2);
    const [first, second] = lines as [string, string];
    expect(first).toMatch(
      new RegExp(`INFO.*: GET /api/v1/users/me 200 \\d+ms get-own-user user=${member.id} req=${ok.headers['x-request-id']}$`),
    );
    expect(second).toContain(`POST /api/v1/messages 400 `);
    expect(second).toContain(`send-message user=${member.id} ${refused.body.code} ${JSON.stringify(refused.body.msg)} req=`);
  });

  it('writes any other entry on one line, its fields as key=value', () => {
    const { lines, log } = captured(true);
    log.warn({ inFlight: 2, timeoutMs: 100 }, 'shutting down');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/WARN.*: shutting down inFlight=2 timeoutMs=100$/);
  });
});
