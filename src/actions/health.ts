import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { pendingMigrations, pingDatabase } from '../db/health';
import { pingRedis } from '../events/redis-calls';
import { bounded } from '../domain/bounded';
import { ApiError } from '../errors';

/** A database that has not answered in this long is reported down (probes usually give up after 5 s). */
export const HEALTH_DB_TIMEOUT_MS = 2000;

/** The same for Redis, which answers a PING in well under a millisecond when it is well. */
export const HEALTH_REDIS_TIMEOUT_MS = 1000;

type Checks = Schema<'HealthChecks'>;

/**
 * GET /health: the database answers and holds every migration this version
 * ships, plus this process's queue counts and whether Redis answers. Throws
 * SERVER_NOT_READY (503) with the checks when the server cannot serve
 * requests.
 *
 * Redis down is reported but is not a 503 (Zulip's check fails on it): every
 * node shares the one Redis, so a 503 would make the load balancer take every
 * node out at once, while each node still serves requests without it (the
 * bus holds events until Redis is back, rate limits count per process
 * meanwhile). Monitoring alerts on `checks.redis` or `parley_redis_up`.
 */
export async function checkHealth(ctx: AppContext): Promise<Data<'get-health'>> {
  const [databaseError, redis] = await Promise.all([
    pingDatabase(ctx.db, HEALTH_DB_TIMEOUT_MS).then(() => null, errorText),
    checkRedis(ctx),
  ]);
  const checks: Checks = {
    database: { status: 'ok' },
    migrations: { status: 'skipped', pending: [] },
    event_queues: { ...eventQueueCounts(ctx) },
    push_relay: { configured: ctx.push !== null, backlog: ctx.push?.backlog ?? 0 },
    redis,
  };
  if (databaseError !== null) {
    checks.database = { status: 'failed', error: databaseError };
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

/** A PING on each Redis connection this process holds (the event bus's, the rate limits'), at the same time. */
async function checkRedis(ctx: AppContext): Promise<Checks['redis']> {
  const usedBy: Checks['redis']['used_by'] = [];
  const pings: Array<Promise<string | null>> = [];
  const ping = (what: string, work: Promise<void>) =>
    work.then(
      () => null,
      (err: unknown) => `${what}: ${errorText(err)}`,
    );
  if (ctx.bus.ping) {
    usedBy.push('event_bus');
    pings.push(ping('event bus', ctx.bus.ping(HEALTH_REDIS_TIMEOUT_MS)));
  }
  if (ctx.rateLimits.redis) {
    usedBy.push('rate_limits');
    pings.push(ping('rate limits', pingRedis(ctx.rateLimits.redis, HEALTH_REDIS_TIMEOUT_MS)));
  }
  if (!pings.length) return { status: 'skipped', used_by: [] };
  const failed = (await Promise.all(pings)).filter((e): e is string => e !== null);
  return failed.length ? { status: 'failed', used_by: usedBy, error: bounded(failed.join('; '), 200) } : { status: 'ok', used_by: usedBy };
}

function errorText(err: unknown): string {
  return bounded(err instanceof Error ? err.message : String(err), 200);
}

function eventQueueCounts(ctx: AppContext): Checks['event_queues'] {
  const { queues, events } = ctx.queues.stats;
  return { queues, events, waiting_polls: ctx.queues.waitingPolls() };
}

function notReady(msg: string, checks: Checks): ApiError {
  return new ApiError(msg, 'SERVER_NOT_READY', 503, { status: 'failed', checks });
}
