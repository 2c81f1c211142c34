import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterMySQL, RateLimiterRedis, RateLimiterSQLite } from 'rate-limiter-flexible';
import type { RateLimitRule, RateLimitStore } from '../domain/rate-limits';
import { dialectOf } from './connection';

export const RATE_LIMIT_TABLE = 'rate_limits';

/** Where a shared store keeps its counters: Parley's database, and the Redis connection of RATE_LIMIT_STORE=redis. */
export interface RateLimitBackends {
  db: Knex;
  redis: Redis | null;
}

/**
 * The one place a store is chosen (RATE_LIMIT_STORE; docs/adr/0010-rate-limits.md).
 * A limiter for one rule; `name` keeps its keys apart from the other rules' in a shared store. */
export function createRateLimiter(
  store: RateLimitStore,
  backends: RateLimitBackends,
  name: string,
  rule: RateLimitRule,
): RateLimiterAbstract {
  const opts = { keyPrefix: name, points: rule.points, duration: rule.durationSeconds };
  if (store === 'memory') return new RateLimiterMemory(opts);
  const insured = {
    ...opts,
    // A key over its limit is refused from memory until its window ends: a client hammering
    // past the limit costs this process no further writes to the shared store.
    inMemoryBlockOnConsumed: rule.points + 1,
    // If the store cannot be reached the limit is still kept, per process.
    insuranceLimiter: new RateLimiterMemory(opts),
  };
  if (store === 'redis') {
    if (!backends.redis) throw new Error('RATE_LIMIT_STORE=redis needs its Redis connection');
    return new RateLimiterRedis({
      ...insured,
      storeClient: backends.redis,
      // Not connected (Redis down, or reconnecting): the insurance limiter answers at once.
      rejectIfRedisNotReady: true,
    });
  }
  const { db } = backends;
  const shared = {
    ...insured,
    storeClient: db,
    storeType: 'knex',
    tableName: RATE_LIMIT_TABLE,
    // The migration made the table; the library must not issue DDL of its own.
    tableCreated: true,
    // Every five minutes, rows expired an hour ago are deleted (addresses and usernames are the
    // client's choice: without this the table would grow with every one ever seen).
    clearExpiredByTimeout: true,
  };
  if (dialectOf(db) === 'mysql') {
    const connection = db.client.config.connection as { database: string };
    return new RateLimiterMySQL({ ...shared, dbName: connection.database });
  }
  return new RateLimiterSQLite(shared);
}
