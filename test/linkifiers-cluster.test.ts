import type { Knex } from 'knex';
import { Caches } from '../src/cache';
import { createDb } from '../src/db/connection';
import { RedisBus } from '../src/events/redis-bus';
import { until } from './support/clock';
import { eachDatabase } from './support/databases';
import { redisAvailable, TestRedis } from './support/redis';
import { startTestServer, type TestServer } from './support/server';

const haveRedis = redisAvailable();

/** A second handle on the test server's database: another node's, with no sinks of the first. */
function secondHandle(db: Knex): Knex {
  const connection = (db.client as { config: { connection: Record<string, unknown> } }).config.connection;
  if (typeof connection.filename === 'string') return createDb({ databaseUrl: null, dataDir: '' }, connection.filename);
  const { user, password, host, port, database } = connection as Record<string, string>;
  const auth = `${encodeURIComponent(user!)}:${encodeURIComponent(password ?? '')}`;
  return createDb({ databaseUrl: `mysql://${auth}@${host}:${port}/${database}`, dataDir: '' });
}

/**
 * Two nodes on the Redis bus, each with its own caches and database handle:
 * a linkifier change on one drops the other's compiled linkifiers (the
 * `linkifiers` invalidation crosses the bus), and leaves the other's callers
 * and users cached.
 */
eachDatabase('linkifier invalidations across nodes', (dialect) => {
  if (!haveRedis) {
    it.skip('needs redis-server', () => undefined);
    return;
  }
  let redis: TestRedis;
  let busA: RedisBus;
  let busB: RedisBus;
  let dbB: Knex;
  let cachesB: Caches;
  let t: TestServer;
  const key = `test:linkifiers:${dialect}`;
  beforeAll(async () => {
    redis = await TestRedis.start();
    busA = new RedisBus({ url: redis.url, nodeId: 'a', key, maxLen: 1000, blockMs: 200 });
    busB = new RedisBus({ url: redis.url, nodeId: 'b', key, maxLen: 1000, blockMs: 200 });
    t = await startTestServer(dialect, undefined, { bus: busA, config: { nodeId: 'a' } });
    dbB = secondHandle(t.ctx.db);
    cachesB = new Caches(busB, dbB, { cacheUsers: 100, cacheRealms: 10, cacheChannels: 100, cacheTtlSeconds: 3600 });
    await busA.start();
    await busB.start();
  });
  afterAll(async () => {
    cachesB.close();
    await busA.close();
    await busB.close();
    await dbB.destroy();
    await t.close();
    await redis.destroy();
  });

  it("a change on node a drops node b's compiled linkifiers, and not its callers or users", async () => {
    const { member, admin } = t.cast;
    expect(await cachesB.linkifiers.get(t.realmId)).toEqual([]);
    expect(await cachesB.callers.get(member.api_key)).toBeDefined();
    await cachesB.users.getMany([member.id]);
    const held = () => ({
      linkifiers: cachesB.linkifiers.cache.peek(t.realmId) !== undefined,
      caller: cachesB.callers.cache.peek(member.api_key) !== undefined,
      user: cachesB.users.cache.peek(member.id) !== undefined,
    });
    expect(held()).toEqual({ linkifiers: true, caller: true, user: true });

    const res = await t.api.post('/realm/filters', admin, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.example/{id}' });
    expect(res.status).toBe(200);
    await until(() => !held().linkifiers, "node b drops the organization's linkifiers");
    expect(held()).toEqual({ linkifiers: false, caller: true, user: true });
    expect((await cachesB.linkifiers.get(t.realmId)).map((l) => l.id)).toEqual([res.body.id]);
  });
});
