import type { Knex } from 'knex';
import { MIGRATION_NAMES } from './migrate';

/**
 * One trivial statement, bounded in time: a database that does not answer
 * (a pool waiting for a connection to a stopped server waits a minute by
 * default) fails the check after `timeoutMs` rather than holding the probe.
 */
export async function pingDatabase(db: Knex, timeoutMs: number): Promise<void> {
  await withTimeout(db.raw('SELECT 1'), timeoutMs, 'no answer');
}

/** The migrations this code ships that the database has not applied, oldest first. */
export async function pendingMigrations(db: Knex, timeoutMs: number): Promise<string[]> {
  const rows = await withTimeout(db('knex_migrations').select<Array<{ name: string }>>('name'), timeoutMs, 'no answer');
  const applied = new Set(rows.map((r) => r.name));
  return MIGRATION_NAMES.filter((name) => !applied.has(name));
}

/** Connections of the pool (knex's tarn pool): in use, idle, and requests waiting for one. */
export function poolStats(db: Knex): { used: number; free: number; pending: number } {
  const pool = (db.client as { pool?: TarnPool }).pool;
  if (!pool) return { used: 0, free: 0, pending: 0 };
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() + pool.numPendingCreates() };
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

async function withTimeout<T>(work: PromiseLike<T>, ms: number, why: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(why)), ms);
  });
  try {
    return await Promise.race([Promise.resolve(work), late]);
  } finally {
    clearTimeout(timer);
  }
}
