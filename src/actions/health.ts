import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { pendingMigrations, pingDatabase } from '../db/health';
import { bounded } from '../domain/bounded';
import { ApiError } from '../errors';

/** A database that has not answered in this long is reported down (probes usually give up after 5 s). */
export const HEALTH_DB_TIMEOUT_MS = 2000;

type Checks = Schema<'HealthChecks'>;

/**
 * GET /health: the database answers and holds every migration this version
 * ships, plus this process's queue counts. Throws SERVER_NOT_READY (503)
 * with the checks when the server cannot serve requests.
 */
export async function checkHealth(ctx: AppContext): Promise<Data<'get-health'>> {
  const checks: Checks = {
    database: { status: 'ok' },
    migrations: { status: 'skipped', pending: [] },
    event_queues: { ...eventQueueCounts(ctx) },
    push_relay: { configured: ctx.push !== null, backlog: ctx.push?.backlog ?? 0 },
  };
  try {
    await pingDatabase(ctx.db, HEALTH_DB_TIMEOUT_MS);
  } catch (err) {
    checks.database = { status: 'failed', error: bounded(err instanceof Error ? err.message : String(err), 200) };
    throw notReady('Cannot query the database', checks);
  }
  try {
    const pending = await pendingMigrations(ctx.db, HEALTH_DB_TIMEOUT_MS);
    checks.migrations = { status: pending.length ? 'failed' : 'ok', pending };
  } catch {
    // No migrations table at all: nothing was ever migrated.
    checks.migrations = { status: 'failed', pending: [] };
  }
  if (checks.migrations.status !== 'ok') throw notReady('Database migrations are pending', checks);
  return { status: 'ok', checks };
}

function eventQueueCounts(ctx: AppContext): Checks['event_queues'] {
  const { queues, events } = ctx.queues.stats;
  return { queues, events, waiting_polls: ctx.queues.waitingPolls() };
}

function notReady(msg: string, checks: Checks): ApiError {
  return new ApiError(msg, 'SERVER_NOT_READY', 503, { status: 'failed', checks });
}
