import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ContractChecker } from './support/contract';
import { eachDatabase, freshMigratedMysqlDatabase } from './support/databases';
import { redisAvailable, TestRedis } from './support/redis';
import { startServerProcess, type ServerProcess } from './support/server-process';
import { testSpec } from './support/server';

const haveRedis = redisAvailable();

const RATE_LIMITED = { result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT', 'retry-after': expect.any(Number) };

/**
 * RATE_LIMIT_STORE=redis: two server processes on one database and one
 * redis-server count every request in Redis, so they share one limit; with
 * Redis gone, each process keeps limiting on its own and no request fails.
 */
eachDatabase('RATE_LIMIT_STORE=redis: two server processes, one redis-server', (dialect) => {
  if (!haveRedis) {
    it.skip('needs redis-server', () => undefined);
    return;
  }
  let redis: TestRedis;
  let admin: Redis;
  let dataDir: string;
  let dropDatabase = async () => {};
  const processes: ServerProcess[] = [];
  let contract: ContractChecker;

  beforeAll(async () => {
    redis = await TestRedis.start();
    admin = new Redis(redis.url, { maxRetriesPerRequest: 0, lazyConnect: true });
    await admin.connect();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-rate-limits-redis-'));
    let databaseUrl = '';
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
      RATE_LIMIT_STORE: 'redis',
      REDIS_URL: redis.url,
      RATE_LIMIT_USER_PER_MINUTE: '10',
      RATE_LIMIT_IP_PER_MINUTE: '4',
    };
    // One after the other: the first seeds the demo organization.
    processes.push(await startServerProcess({ ...env, NODE_ID: 'a' }, 120_000));
    processes.push(await startServerProcess({ ...env, NODE_ID: 'b' }, 60_000));
  }, 200_000);
  afterAll(async () => {
    for (const p of processes) await p.kill();
    admin?.disconnect();
    await redis?.destroy();
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** GET `apiPath` (under /api/v1, or `/health` outside it), as the owner unless `auth` is false. */
  async function get(p: ServerProcess, apiPath: string, auth = true) {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Basic ${Buffer.from(`${p.owner.email}:${p.owner.apiKey}`).toString('base64')}`;
    const target = apiPath === '/health' ? apiPath : `/api/v1${apiPath}`;
    const res = await fetch(`${p.url}${target}`, { headers });
    const body = (await res.json()) as Record<string, any>;
    contract.check('get', target, res.status, body);
    return { status: res.status, body, remaining: res.headers.get('x-ratelimit-remaining') };
  }

  it('share one limit per user, counted in Redis', async () => {
    const [a, b] = processes as [ServerProcess, ServerProcess];
    expect(a.pid).not.toBe(b.pid);
    for (let i = 0; i < 10; i++) {
      const res = await get(i % 2 ? b : a, '/users/me');
      expect([res.status, res.remaining]).toEqual([200, String(9 - i)]);
    }
    // The second process refuses too: it counted the first one's requests.
    for (const p of [a, b]) expect(await get(p, '/users/me')).toMatchObject({ status: 429, body: RATE_LIMITED, remaining: '0' });
    // The count is in Redis, under Parley's prefix and the rule's, and expires with its window.
    const owner = (await fetch(`${a.url}/api/v1/users/${encodeURIComponent(a.owner.email)}`)).status; // 401: counts nothing
    expect(owner).toBe(401);
    const keys = await admin.keys('parley:ratelimit:*');
    expect(keys).toEqual([expect.stringMatching(/^parley:ratelimit:user:\d+$/)]);
    // 10 allowed, then one refused by each process: each counts its first refusal in Redis, and
    // refuses the user from memory after that until the window ends (no more Redis writes).
    expect(Number(await admin.get(keys[0]!))).toBe(12);
    expect(await get(a, '/users/me')).toMatchObject({ status: 429, body: RATE_LIMITED });
    expect(Number(await admin.get(keys[0]!))).toBe(12);
    const ttl = await admin.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('with Redis stopped, every request is still answered: each process limits on its own, none fails', async () => {
    const [a, b] = processes as [ServerProcess, ServerProcess];
    admin.disconnect();
    await redis.stop();
    // Requests without credentials count per client address (limit 4): with Redis gone each
    // process counts its own, so each lets 4 through (8 in all) and refuses the 5th.
    for (const p of [a, b]) {
      for (let i = 0; i < 4; i++) expect(await get(p, '/server_settings', false)).toMatchObject({ status: 200, remaining: String(3 - i) });
      expect(await get(p, '/server_settings', false)).toMatchObject({ status: 429, body: RATE_LIMITED });
    }
    // The user over the shared limit stays refused by both until the window ends.
    for (const p of [a, b]) expect(await get(p, '/users/me')).toMatchObject({ status: 429, body: RATE_LIMITED });
    // /health (outside the API and its limits) says so, and still answers 200: Redis is not the database.
    for (const p of [a, b]) {
      const health = await get(p, '/health', false);
      expect(health.status).toBe(200);
      expect(health.body.checks.redis).toEqual({
        status: 'failed',
        used_by: ['rate_limits'],
        error: expect.stringMatching(/^rate limits: /),
      });
    }
    // A SIGTERM'd process exits cleanly even though its Redis connection is down.
    const exits = await Promise.all(processes.map((p) => p.stop()));
    expect(exits).toEqual([0, 0]);
    for (const p of processes) {
      expect(p.output()).not.toMatch(/Internal server error|Unhandled error event/);
      expect(p.output()).toMatch(/rate limits: Redis unreachable, counting in this process meanwhile/);
    }
  });
});
