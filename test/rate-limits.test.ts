import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Config } from '../src/config';
import { ContractChecker } from './support/contract';
import { eachDatabase, freshMigratedMysqlDatabase } from './support/databases';
import { ServerProcess, startServerProcess } from './support/server-process';
import { CAST_PASSWORD, startTestServer, testSpec, TestServer, type ApiResponse } from './support/server';

/**
 * Zulip's rate limits, on (the other test files run without them): per
 * user, per client address without credentials, per username for password
 * logins; each 429 is Zulip's body with its headers, and every response a
 * limit applied to carries X-RateLimit-*.
 */
const RATE_LIMITED = { result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT' };
const WRONG_PASSWORD = { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' };

const withLimits = (dialect: Parameters<typeof startTestServer>[0], config: Partial<Config> = {}) =>
  startTestServer(dialect, undefined, { config: { rateLimits: true, ...config } });

const nowSeconds = () => Date.now() / 1000;

/** A 429's body and headers, as Zulip sends them; returns its retry-after. */
function expectRateLimited(res: { status: number; body: Record<string, any>; headers: Record<string, string> }, limit: number): number {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ ...RATE_LIMITED, 'retry-after': expect.any(Number) });
  const retryAfter = res.body['retry-after'] as number;
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  // Reset: the Unix time (whole seconds) at which no limit applies any more.
  expect(Math.abs(Number(res.headers['x-ratelimit-reset']) - Math.floor(nowSeconds() + retryAfter))).toBeLessThanOrEqual(1);
  return retryAfter;
}

function expectAllowed(res: ApiResponse, limit: number, remaining: number, windowSeconds: number): void {
  expect(res.status).toBe(200);
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['x-ratelimit-reset']);
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThan(nowSeconds());
  expect(reset).toBeLessThanOrEqual(nowSeconds() + windowSeconds + 1);
}

eachDatabase('rate limits', (dialect) => {
  describe('per user (Zulip: 200 a minute)', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await withLimits(dialect);
    });
    afterAll(() => t.close());

    it('refuses the 201st request of a minute with Zulip 429 and its headers; another user is unaffected', async () => {
      const first = await t.api.get('/users/me', t.cast.member);
      expectAllowed(first, 200, 199, 60);
      for (let i = 2; i <= 199; i++) expect((await t.api.get('/users/me', t.cast.member)).status).toBe(200);
      expectAllowed(await t.api.get('/users/me', t.cast.member), 200, 0, 60);

      const refused = await t.api.get('/users/me', t.cast.member);
      const retryAfter = expectRateLimited(refused, 200);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Any operation, whatever it carries: the limit is applied before validation.
      expectRateLimited(await t.api.post('/messages', t.cast.member, { type: 'channel' }), 200);

      expectAllowed(await t.api.get('/users/me', t.cast.admin), 200, 199, 60);
    });

    it('counts file downloads and resumable uploads against the same limit', async () => {
      const who = t.cast.moderator;
      for (let i = 1; i <= 199; i++) expect((await t.api.get('/users/me', who)).status).toBe(200);
      // The 200th request: a file (none there), still counted and its headers sent.
      const file = await request(t.app).get(`/user_uploads/${t.realmId}/ab/none/x.txt`).auth(who.email, who.api_key);
      expect([file.status, file.headers['x-ratelimit-remaining']]).toEqual([404, '0']);
      const tus = await request(t.app)
        .post('/api/v1/tus')
        .auth(who.email, who.api_key)
        .set({ 'Tus-Resumable': '1.0.0', 'Upload-Length': '4' });
      expectRateLimited(tus, 200);
      expect(tus.headers['content-type']).toMatch(/^application\/json/);
      expectRateLimited(await request(t.app).get(`/user_uploads/${t.realmId}/ab/none/x.txt`).auth(who.email, who.api_key), 200);
    });
  });

  describe('per client address without credentials (Zulip: 100 a minute)', () => {
    let t: TestServer;
    let server: http.Server;
    let port: number;
    beforeAll(async () => {
      t = await withLimits(dialect);
      server = http.createServer(t.app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
      await t.close();
    });

    /** GET /server_settings from a given loopback address (Linux routes all of 127.0.0.0/8 to lo). */
    const fromAddress = (localAddress: string) =>
      new Promise<{ status: number; body: Record<string, any>; headers: Record<string, string> }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/server_settings', localAddress }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers as Record<string, string> }));
        });
        req.on('error', reject);
      });

    it('refuses the 101st unauthenticated request of a minute from one address, and only from that one', async () => {
      const first = await fromAddress('127.0.0.1');
      expect(first.status).toBe(200);
      expect([first.headers['x-ratelimit-limit'], first.headers['x-ratelimit-remaining']]).toEqual(['100', '99']);
      for (let i = 2; i <= 100; i++) expect((await fromAddress('127.0.0.1')).status).toBe(200);
      const refused = await fromAddress('127.0.0.1');
      new ContractChecker(t.spec).check('get', '/api/v1/server_settings', refused.status, refused.body);
      expectRateLimited(refused, 100);

      const other = await fromAddress('127.0.0.2');
      expect(other.status).toBe(200);
      expect(other.headers['x-ratelimit-remaining']).toBe('99');
      // An authenticated request from the exhausted address counts against its user instead.
      expectAllowed(await t.api.get('/users/me', t.cast.member), 200, 199, 60);
    });
  });

  describe('behind a load balancer (TRUSTED_PROXIES)', () => {
    /** GET /server_settings from 127.0.0.1, saying it forwards for `forwardedFor`. */
    async function forwarded(port: number, forwardedFor: string) {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/server_settings`, { headers: { 'X-Forwarded-For': forwardedFor } });
      return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
    }

    async function listening(config: Partial<Config>) {
      const t = await withLimits(dialect, { rateLimitIpPerMinute: 3, ...config });
      const server = http.createServer(t.app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const close = async () => {
        await new Promise((resolve) => server.close(resolve));
        await t.close();
      };
      return { port, close };
    }

    it("counts each forwarded client on its own when the proxy's address is trusted", async () => {
      const { port, close } = await listening({ trustedProxies: ['loopback'] });
      try {
        for (const left of ['2', '1', '0']) expect(await forwarded(port, '203.0.113.7')).toEqual({ status: 200, remaining: left });
        expect((await forwarded(port, '203.0.113.7')).status).toBe(429);
        // Another client behind the same proxy has its own count.
        expect(await forwarded(port, '203.0.113.8')).toEqual({ status: 200, remaining: '2' });
      } finally {
        await close();
      }
    });

    it('ignores X-Forwarded-For from an address it does not trust (the default)', async () => {
      const { port, close } = await listening({});
      try {
        // A client cannot pick a fresh address for each request: all count as 127.0.0.1.
        for (const [i, left] of ['2', '1', '0'].entries())
          expect(await forwarded(port, `198.51.100.${i}`)).toEqual({ status: 200, remaining: left });
        expect((await forwarded(port, '198.51.100.9')).status).toBe(429);
      } finally {
        await close();
      }
    });
  });

  describe('password attempts per username (Zulip: 5 in 30 minutes)', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await withLimits(dialect);
    });
    afterAll(() => t.close());

    const login = (username: string, password: string) => t.api.post('/fetch_api_key', null, { username, password });

    it('refuses the 6th attempt after 5 failures, even with the right password; other usernames are unaffected', async () => {
      for (let i = 0; i < 5; i++) {
        const res = await login('bot@example.com', `wrong-${i}`);
        expect([res.status, res.body]).toEqual([401, WRONG_PASSWORD]);
        // The strictest limit applied: 5 attempts for the username (the address allows 100).
        expect([res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']]).toEqual(['5', String(4 - i)]);
      }
      const refused = await request(t.app)
        .post('/api/v1/fetch_api_key')
        .type('form')
        .send({ username: 'BOT@example.com', password: CAST_PASSWORD });
      const retryAfter = expectRateLimited(refused, 5);
      expect(retryAfter).toBeGreaterThan(30 * 60 - 60);
      expect(retryAfter).toBeLessThanOrEqual(30 * 60);

      const other = await login('member@example.com', CAST_PASSWORD);
      expect(other.status).toBe(200);
      expect(other.body.api_key).toBe(t.cast.member.api_key);
    });

    it('forgets a username’s failures once it logs in', async () => {
      for (let i = 0; i < 4; i++) expect((await login('moderator@example.com', `wrong-${i}`)).status).toBe(401);
      expect((await login('moderator@example.com', CAST_PASSWORD)).status).toBe(200);
      for (let i = 0; i < 5; i++) expect((await login('moderator@example.com', `again-${i}`)).body).toEqual(WRONG_PASSWORD);
      expect((await login('moderator@example.com', CAST_PASSWORD)).status).toBe(429);
    });
  });

  describe('Retry-After', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await withLimits(dialect, { rateLimitUserPerMinute: 1 });
    });
    afterAll(() => t.close());

    it('counts down to the end of the window', async () => {
      expectAllowed(await t.api.get('/users/me', t.cast.guest), 1, 0, 60);
      const first = await t.api.get('/users/me', t.cast.guest);
      const before = expectRateLimited(first, 1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const second = await t.api.get('/users/me', t.cast.guest);
      const after = expectRateLimited(second, 1);
      expect(after).toBeLessThanOrEqual(before - 1);
      expect(after).toBeGreaterThan(before - 5);
      // Same window, same end.
      expect(Math.abs(Number(second.headers['x-ratelimit-reset']) - Number(first.headers['x-ratelimit-reset']))).toBeLessThanOrEqual(1);
    });
  });

  describe('RATE_LIMITS=off', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer(dialect, undefined, { config: { rateLimits: false } });
    });
    afterAll(() => t.close());

    it('lets 230 requests a minute from one user through, without rate-limit headers', async () => {
      for (let i = 0; i < 230; i++) {
        const res = await t.api.get('/users/me', t.cast.member);
        expect(res.status).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });
  });

  describe('RATE_LIMIT_STORE=database: two server processes on one database', () => {
    let dataDir: string;
    let databaseUrl = '';
    let dropDatabase = async () => {};
    const processes: ServerProcess[] = [];
    let contract: ContractChecker;

    beforeAll(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-rate-limits-'));
      if (dialect === 'mysql') {
        const mysql = await freshMigratedMysqlDatabase();
        databaseUrl = mysql.url;
        dropDatabase = mysql.drop;
      }
      contract = new ContractChecker(await testSpec());
      const env = {
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        RATE_LIMITS: 'on',
        RATE_LIMIT_STORE: 'database',
        RATE_LIMIT_USER_PER_MINUTE: '10',
      };
      // One after the other: the first seeds the demo organization.
      processes.push(await startServerProcess(env, 120_000));
      processes.push(await startServerProcess(env, 60_000));
    }, 200_000);
    afterAll(async () => {
      for (const p of processes) await p.stop();
      await dropDatabase();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    async function get(p: ServerProcess, apiPath: string) {
      const res = await fetch(`${p.url}/api/v1${apiPath}`, {
        headers: { authorization: `Basic ${Buffer.from(`${p.owner.email}:${p.owner.apiKey}`).toString('base64')}` },
      });
      const body = (await res.json()) as Record<string, any>;
      contract.check('get', `/api/v1${apiPath}`, res.status, body);
      return { status: res.status, body, headers: Object.fromEntries(res.headers.entries()) };
    }

    it('share one limit per user', async () => {
      const [a, b] = processes as [ServerProcess, ServerProcess];
      expect(a.pid).not.toBe(b.pid);
      for (let i = 0; i < 10; i++) {
        const res = await get(i % 2 ? b : a, '/users/me');
        expect([res.status, res.headers['x-ratelimit-remaining']]).toEqual([200, String(9 - i)]);
      }
      expectRateLimited(await get(a, '/users/me'), 10);
      expectRateLimited(await get(b, '/users/me'), 10);
    });
  });
});
