import type Database from '@rocicorp/zero-sqlite3';
import { LRUCache } from 'lru-cache';

/**
 * Prepared statements per connection, keyed by their SQL. knex's better-sqlite3
 * client prepares every statement again on every query (parsing and planning
 * it each time); a statement prepared once is reused for the connection's
 * life. Bounded: a list of ids compiles to as many `?` as it has ids, so
 * rarely repeated texts must not pile up. SQLite re-prepares a cached
 * statement by itself when the schema changes under it (a migration).
 */
export const STATEMENTS_PER_CONNECTION = 1000;

interface Cache {
  statements: LRUCache<string, Database.Statement>;
  prepared: number;
  reused: number;
}

const caches = new WeakMap<Database.Database, Cache>();

function cacheOf(connection: Database.Database): Cache {
  let cache = caches.get(connection);
  if (!cache) {
    cache = { statements: new LRUCache({ max: STATEMENTS_PER_CONNECTION }), prepared: 0, reused: 0 };
    caches.set(connection, cache);
  }
  return cache;
}

/** The connection's statement for `sql`, prepared on first use. */
export function preparedStatement(connection: Database.Database, sql: string): Database.Statement {
  const cache = cacheOf(connection);
  const cached = cache.statements.get(sql);
  if (cached) {
    cache.reused++;
    return cached;
  }
  const statement = connection.prepare(sql);
  cache.statements.set(sql, statement);
  cache.prepared++;
  return statement;
}

/** Statements the connection prepared and reused so far, and how many it holds now. */
export function statementCacheStats(connection: Database.Database): { prepared: number; reused: number; held: number } {
  const cache = caches.get(connection);
  return { prepared: cache?.prepared ?? 0, reused: cache?.reused ?? 0, held: cache?.statements.size ?? 0 };
}
