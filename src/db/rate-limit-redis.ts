import { Redis } from 'ioredis';

/**
 * The connection of RATE_LIMIT_STORE=redis, one per process, shared by the
 * three limiters (docs/adr/0010-rate-limits.md). It is not the event bus's
 * connection (src/events/redis-bus.ts), whose commands wait for Redis however
 * long it takes (events must not be lost or reordered), and whose reader sits
 * in a blocking read: a rate-limit check sits in front of every request, so
 * here a command fails fast instead and the in-memory insurance limiter
 * answers (src/db/rate-limit-store.ts).
 */
export interface RateLimitRedisOptions {
  url: string;
  /** Shown by Redis' CLIENT LIST: which node holds the connection. */
  name: string;
  /** Every connection error, and the connection closing; Redis down repeats them at each reconnection attempt. */
  onError: (err: unknown) => void;
}

/** How long one counter update may take before the request is counted in memory instead. */
export const RATE_LIMIT_REDIS_TIMEOUT_MS = 1000;

/** Parley's counters in a Redis it may share with the event stream or with other programs. */
export const RATE_LIMIT_REDIS_PREFIX = 'parley:ratelimit:';

export function openRateLimitRedis(opts: RateLimitRedisOptions): Redis {
  const client = new Redis(opts.url, {
    connectionName: opts.name,
    keyPrefix: RATE_LIMIT_REDIS_PREFIX,
    // Not connected: a command fails at once (no queue of requests waiting for Redis)...
    enableOfflineQueue: false,
    // ...one in flight when the connection drops is not sent again after reconnection...
    maxRetriesPerRequest: 0,
    // ...and one Redis does not answer (a hung server, a lost network) fails after this long.
    commandTimeout: RATE_LIMIT_REDIS_TIMEOUT_MS,
    // Reconnect for ever, backing off to 2 s, as the event bus does.
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  });
  client.on('error', opts.onError);
  // Redis stopping cleanly closes the connection without an error: reported all the same.
  client.on('close', () => opts.onError(new Error('connection closed')));
  return client;
}

/**
 * Closes the connection: QUIT when connected (replies still due arrive
 * first), bounded in time; at once when not connected (nothing is waiting:
 * commands are never queued for a connection that is not there).
 */
export async function closeRedis(client: Redis, timeoutMs = RATE_LIMIT_REDIS_TIMEOUT_MS): Promise<void> {
  if (client.status === 'ready')
    await within(
      client.quit().catch(() => undefined),
      timeoutMs,
    );
  client.disconnect();
}

/** A PING within `timeoutMs` (the health check); not connected: refused at once. */
export async function pingRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status !== 'ready') throw new Error(`not connected (${client.status})`);
  if ((await within(client.ping(), timeoutMs)) === 'late') throw new Error(`no answer in ${timeoutMs} ms`);
}

/** `work`'s value, or 'late' once `ms` have passed without it settling. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
