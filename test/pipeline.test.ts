import request from 'supertest';
import pino from 'pino';
import { buildApp } from '../src/app';
import { ApiError } from '../src/errors';
import type { HandlerTable } from '../src/http/handler';
import { HANDLERS } from '../src/http/routes';
import { eachDatabase } from './support/databases';
import { encodeFields, startTestServer, TestServer } from './support/server';

/**
 * The request pipeline shared by every endpoint: routing (404/405),
 * authentication, parameter normalisation, validation wording, envelopes.
 * A few cases run through an extra echo handler on `update-user` (a PATCH
 * with a path parameter and JSON-encoded body fields) to observe exactly
 * what a handler receives.
 */
eachDatabase('request pipeline', (dialect) => {
  let t: TestServer;
  let echoApp: ReturnType<typeof buildApp>;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const echo: HandlerTable = {
      ...HANDLERS,
      'update-user': async ({ params }) => ({ echo: params }) as never,
      'get-users': async () => {
        throw new Error('secret detail that must not leak');
      },
    };
    echoApp = buildApp({ ctx: t.ctx, spec: t.spec, handlers: echo, log: pino({ level: 'silent' }) });
  });
  afterAll(() => t.close());

  const swapCase = (k: string) => [...k].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  const basic = (u: { email: string; api_key: string }) => 'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64');

  describe('routing', () => {
    it('answers an unknown /api/v1 path with a JSON 404', async () => {
      const res = await t.api.get('/no/such/endpoint', t.cast.member);
      expect([res.status, res.body]).toEqual([404, { result: 'error', msg: 'Endpoint does not exist', code: 'BAD_REQUEST' }]);
    });

    it('answers a wrong method with 405 and the allowed methods, before authentication', async () => {
      const res = await request(t.app).put('/api/v1/users/me');
      expect(res.status).toBe(405);
      expect(res.body).toEqual({
        result: 'error',
        msg: 'Method Not Allowed',
        code: 'METHOD_NOT_ALLOWED',
        allowed_methods: ['DELETE', 'GET'],
      });
      expect(res.headers.allow).toBe('DELETE, GET');
    });

    it('answers an operation still being built with 501', async () => {
      // An app whose handler table lacks one operation, as for those in PENDING_OPERATIONS.
      const { 'get-saved-snippets': _built, ...rest } = HANDLERS;
      const app = buildApp({ ctx: t.ctx, spec: t.spec, handlers: rest, log: pino({ level: 'silent' }) });
      const res = await request(app).get('/api/v1/saved_snippets').set('Authorization', basic(t.cast.member));
      expect([res.status, res.body]).toEqual([
        501,
        { result: 'error', msg: 'Not implemented yet: get-saved-snippets', code: 'NOT_IMPLEMENTED' },
      ]);
    });
  });

  describe('authentication', () => {
    it('refuses a request without credentials with 401 and WWW-Authenticate', async () => {
      const res = await request(t.app).get('/api/v1/users/me');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="zulip"');
      expect(res.body).toEqual({
        result: 'error',
        msg: 'Not logged in: API authentication or user session required',
        code: 'UNAUTHORIZED',
      });
    });

    it.each([
      ['a wrong API key', (u: any) => basic({ email: u.email, api_key: 'x'.repeat(32) }), 'Invalid API key'],
      ['an unknown email', (u: any) => basic({ email: 'nobody@example.com', api_key: u.api_key }), 'Invalid API key'],
      ['a key of the wrong length', (u: any) => basic({ email: u.email, api_key: 'short' }), 'Malformed API key'],
      [
        "another user's address with this key",
        () => basic({ email: t.cast.admin.email, api_key: t.cast.member.api_key }),
        'Invalid API key',
      ],
      ['the key in another case', (u: any) => basic({ email: u.email, api_key: swapCase(u.api_key) }), 'Invalid API key'],
      ['no colon', () => 'Basic ' + Buffer.from('nocolon').toString('base64'), 'Invalid authorization header for basic auth'],
    ])('refuses %s with 401', async (_what, header, msg) => {
      const res = await request(t.app).get('/api/v1/users/me').set('Authorization', header(t.cast.member));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="zulip"');
      expect(res.body).toEqual({ result: 'error', msg, code: 'UNAUTHORIZED' });
    });

    it('refuses a deactivated account at once', async () => {
      const res = await t.api.get('/users/me', t.cast.deactivated);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ result: 'error', msg: 'Account is deactivated', code: 'UNAUTHORIZED' });
    });

    it('refuses a scheme other than Basic with 400', async () => {
      const res = await request(t.app).get('/api/v1/users/me').set('Authorization', 'Bearer abc');
      expect([res.status, res.body]).toEqual([
        400,
        { result: 'error', msg: 'This endpoint requires HTTP basic authentication.', code: 'BAD_REQUEST' },
      ]);
    });

    it('accepts the email in any case, the API email too', async () => {
      const apiEmail = `user${t.cast.member.id}@parley.invalid`;
      await t.ctx.db('users').where({ id: t.cast.member.id }).update({ email: apiEmail });
      try {
        const res = await request(t.app)
          .get('/api/v1/users/me')
          .set('Authorization', basic({ email: apiEmail.toUpperCase(), api_key: t.cast.member.api_key }));
        expect(res.status).toBe(200);
        expect(res.body.user_id).toBe(t.cast.member.id);
      } finally {
        await t.ctx.db('users').where({ id: t.cast.member.id }).update({ email: t.cast.member.email });
      }
    });

    it('accepts the email in any case', async () => {
      const res = await request(t.app)
        .get('/api/v1/users/me')
        .set('Authorization', basic({ email: t.cast.member.email.toUpperCase(), api_key: t.cast.member.api_key }));
      expect(res.status).toBe(200);
      expect(res.body.user_id).toBe(t.cast.member.id);
    });
  });

  describe('parameters', () => {
    it('lists parameters the endpoint does not take in ignored_parameters_unsupported, sorted', async () => {
      const res = await t.api.get('/users/me', t.cast.member, { zeta: '1', alpha: 'x' });
      expect(res.status).toBe(200);
      expect(res.body.ignored_parameters_unsupported).toEqual(['alpha', 'zeta']);
    });

    it('omits ignored_parameters_unsupported when every parameter was used', async () => {
      const res = await t.api.get('/users/me', t.cast.member);
      expect(res.body).not.toHaveProperty('ignored_parameters_unsupported');
    });

    it('takes PATCH parameters from the query string and decodes JSON fields', async () => {
      const res = await request(echoApp)
        .patch(`/api/v1/users/${t.cast.member.id}`)
        .query(encodeFields({ role: 300, full_name: 'New Name', bogus: 1 }))
        .set('Authorization', basic(t.cast.admin));
      expect(res.status).toBe(200);
      expect(res.body.echo).toEqual({ user_id: t.cast.member.id, role: 300, full_name: 'New Name' });
      expect(res.body.ignored_parameters_unsupported).toEqual(['bogus']);
    });

    it('decodes JSON fields of a multipart body, and the body wins over the query string', async () => {
      const res = await request(echoApp)
        .patch(`/api/v1/users/${t.cast.member.id}`)
        .query({ full_name: 'From Query' })
        .field('role', '400')
        .field('full_name', 'From Body')
        .field('profile_data', JSON.stringify([{ id: 1, value: 'x' }]))
        .set('Authorization', basic(t.cast.admin));
      expect(res.status).toBe(200);
      expect(res.body.echo).toEqual({
        user_id: t.cast.member.id,
        role: 400,
        full_name: 'From Body',
        profile_data: [{ id: 1, value: 'x' }],
      });
    });

    it('says "is not valid JSON" for a JSON field that does not parse', async () => {
      const res = await request(echoApp)
        .patch(`/api/v1/users/${t.cast.member.id}`)
        .type('form')
        .send({ profile_data: '[{' })
        .set('Authorization', basic(t.cast.admin));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'profile_data is not valid JSON', code: 'BAD_REQUEST' });
    });

    it('words type errors as Zulip does', async () => {
      const res = await request(echoApp)
        .patch(`/api/v1/users/${t.cast.member.id}`)
        .type('form')
        .send({ role: '"admin"' })
        .set('Authorization', basic(t.cast.admin));
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg: 'role is not an integer', code: 'BAD_REQUEST' }]);
    });

    it('words a missing argument as REQUEST_VARIABLE_MISSING with var_name', async () => {
      const res = await t.api.post('/users', t.cast.owner, { email: 'x@example.com', full_name: 'X Y' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: "Missing 'password' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'password',
      });
    });

    it('answers a non-integer path parameter with a Zulip error', async () => {
      const res = await request(echoApp).patch('/api/v1/messages/abc').set('Authorization', basic(t.cast.admin));
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg: 'message_id is not an integer', code: 'BAD_REQUEST' }]);
      // Blank text passes the validator's loose integer check as 0; it is no integer either.
      for (const blank of ['%E2%80%A8', '%20', '%091']) {
        const odd = await request(t.app).patch(`/api/v1/saved_snippets/${blank}`).set('Authorization', basic(t.cast.member));
        expect([blank, odd.status, odd.body.msg]).toEqual([blank, 400, 'saved_snippet_id is not an integer']);
      }
      // Beside a sibling template (/users/{email}), a non-integer segment is the sibling's parameter.
      const sibling = await request(t.app).patch('/api/v1/users/abc').set('Authorization', basic(t.cast.admin));
      expect([sibling.status, sibling.body]).toEqual([400, { result: 'error', msg: 'No such user', code: 'BAD_REQUEST' }]);
    });
  });

  describe('failures', () => {
    it('turns an unexpected error into a 500 that reveals nothing', async () => {
      const res = await request(echoApp).get('/api/v1/users').set('Authorization', basic(t.cast.member));
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' });
      expect(JSON.stringify(res.body)).not.toContain('secret');
    });

    it('logs a 500 once, with the operation and the request id the client got, and never the API key', async () => {
      const lines: Array<Record<string, any>> = [];
      const sink = { write: (line: string) => void lines.push(JSON.parse(line)) };
      const log = pino({ level: 'info' }, sink);
      const failing: HandlerTable = {
        ...HANDLERS,
        'get-users': async () => {
          throw new Error(`select * from users where api_key = 'x' -- ${'long '.repeat(2000)}`);
        },
      };
      const app = buildApp({ ctx: t.ctx, spec: t.spec, handlers: failing, log });
      const res = await request(app).get('/api/v1/users').set('Authorization', basic(t.cast.member));
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' });
      const requestId = res.headers['x-request-id'];
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      const errors = lines.filter((l) => l.level >= 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ requestId, operationId: 'get-users', method: 'GET', path: '/api/v1/users', msg: 'request failed' });
      expect(errors[0]!.err.message).toContain('select * from users');
      expect(errors[0]!.err.message.length).toBeLessThanOrEqual(2001);
      // The access line names the same request and operation, at info level, with the code the client got.
      expect(lines.find((l) => l.level < 50)).toMatchObject({
        level: 30,
        reqId: requestId,
        operationId: 'get-users',
        status: 500,
        error: { code: 'INTERNAL_SERVER_ERROR', msg: 'Internal server error' },
      });
      expect(JSON.stringify(lines)).not.toContain(t.cast.member.api_key);
    });

    it('maps a typed error with extra fields and headers', async () => {
      const app = buildApp({
        ctx: t.ctx,
        spec: t.spec,
        handlers: {
          'get-users': async () => {
            throw new ApiError('Nope', 'STREAM_DOES_NOT_EXIST', 400, { stream_id: 7 }, { 'X-Test': 'y' });
          },
        },
      });
      const res = await request(app).get('/api/v1/users').set('Authorization', basic(t.cast.member));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'Nope', code: 'STREAM_DOES_NOT_EXIST', stream_id: 7 });
      expect(res.headers['x-test']).toBe('y');
    });
  });

  it('a success is written as res.json writes it, with or without the response validator', async () => {
    const answers = [];
    for (const validateResponses of [false, true]) {
      const app = buildApp({ ctx: { ...t.ctx, config: { ...t.ctx.config, validateResponses } }, spec: t.spec });
      const res = await request(app).get('/api/v1/users/me').set('Authorization', basic(t.cast.member));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
      answers.push(res.text);
    }
    expect(answers[0]).toBe(answers[1]);
    expect(JSON.parse(answers[0]!)).toMatchObject({ result: 'success', msg: '', user_id: t.cast.member.id });
  });

  it('sets Content-Length to the bytes of a text beyond Latin-1 (a two-byte string), not its characters, and a HEAD gets the same length', async () => {
    const app = buildApp({ ctx: t.ctx, spec: t.spec });
    const name = 'Zoë 日本語 🚀';
    const renamed = await request(app)
      .patch('/api/v1/settings')
      .type('form')
      .send({ full_name: name })
      .set('Authorization', basic(t.cast.member));
    expect(renamed.status).toBe(200);
    const res = await request(app).get('/api/v1/users/me').set('Authorization', basic(t.cast.member));
    expect((res.body as { full_name: string }).full_name).toBe(name);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    expect(Number(res.headers['content-length'])).toBeGreaterThan(res.text.length);
    const head = await request(app).head('/api/v1/users/me').set('Authorization', basic(t.cast.member));
    expect([head.status, head.headers['content-length'], head.text]).toEqual([200, res.headers['content-length'], undefined]);
  });
});
