import type { Knex } from 'knex';
import { Caches } from '../../src/cache';
import { createDb } from '../../src/db/connection';
import { RedisBus } from '../../src/events/redis-bus';
import type { Dialect } from '../../src/db/connection';
import { TestRedis } from './redis';
import { startTestServer, type TestServer } from './server';

/** A second handle on the test server's database: another node's, with no sinks of the first. */
export function secondHandle(db: Knex): Knex {
  const connection = (db.client as { config: { connection: Record<string, unknown> } }).config.connection;
  if (typeof connection.filename === 'string') return createDb({ databaseUrl: null, dataDir: '' }, connection.filename);
  const { user, password, host, port, database } = connection as Record<string, string>;
  const auth = `${encodeURIComponent(user!)}:${encodeURIComponent(password ?? '')}`;
  return createDb({ databaseUrl: `mysql://${auth}@${host}:${port}/${database}`, dataDir: '' });
}

/** Node a (a test server) and node b (caches and a database handle of its own), on one Redis bus. */
export interface TwoNodes {
  t: TestServer;
  dbB: Knex;
  cachesB: Caches;
}

/**
 * Registers the suite's beforeAll and afterAll that start and stop two nodes
 * on a Redis bus under `key`; the returned object is filled in beforeAll.
 */
export function twoNodesOnRedis(dialect: Dialect, key: string): TwoNodes {
  const nodes = {} as TwoNodes;
  let redis: TestRedis;
  let busA: RedisBus;
  let busB: RedisBus;
  beforeAll(async () => {
    redis = await TestRedis.start();
    busA = new RedisBus({ url: redis.url, nodeId: 'a', key, maxLen: 1000, blockMs: 200 });
    busB = new RedisBus({ url: redis.url, nodeId: 'b', key, maxLen: 1000, blockMs: 200 });
    nodes.t = await startTestServer(dialect, undefined, { bus: busA, config: { nodeId: 'a' } });
    nodes.dbB = secondHandle(nodes.t.ctx.db);
    nodes.cachesB = new Caches(busB, nodes.dbB, { cacheUsers: 100, cacheRealms: 10, cacheChannels: 100, cacheTtlSeconds: 3600 });
    await busA.start();
    await busB.start();
  });
  afterAll(async () => {
    nodes.cachesB.close();
    await busA.close();
    await busB.close();
    await nodes.dbB.destroy();
    await nodes.t.close();
    await redis.destroy();
  });
  return nodes;
}
