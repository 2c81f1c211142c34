import type { Knex } from 'knex';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterMySQL, RateLimiterSQLite } from 'rate-limiter-flexible';
import type { RateLimitRule, RateLimitStore } from '../domain/rate-limits';
import { dialectOf } from './connection';

export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * The one place a store is chosen (RATE_LIMIT_STORE; docs/adr/0010-rate-limits.md).
 * A limiter for one rule; `name` keeps its keys apart from the other rules' in a shared store. */
export function createRateLimiter(store: RateLimitStore, db: Knex, name: string, rule: RateLimitRule): RateLimiterAbstract {
  const opts = { keyPrefix: name, points: rule.points, duration: rule.durationSeconds };
  if (store === 'memory') return new RateLimiterMemory(opts);
  const shared = {
    ...opts,
    storeClient: db,
    storeType: 'knex',
    tableName: RATE_LIMIT_TABLE,
    // The migration made the table; the library must not issue DDL of its own.
    tableCreated: true,
    // Every five minutes, rows expired an hour ago are deleted (addresses and usernames are the
    // client's choice: without this the table would grow with every one ever seen).
    clearExpiredByTimeout: true,
    // A key over its limit is refused from memory until its window ends: a client hammering
    // past the limit costs this process no further database writes.
    inMemoryBlockOnConsumed: rule.points + 1,
    // If the database cannot be reached the limit is still kept, per process.
    insuranceLimiter: new RateLimiterMemory(opts),
  };
  if (dialectOf(db) === 'mysql') {
    const connection = db.client.config.connection as { database: string };
    return new RateLimiterMySQL({ ...shared, dbName: connection.database });
  }
  return new RateLimiterSQLite(shared);
}
