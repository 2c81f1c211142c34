import type { Redis } from 'ioredis';

/** ioredis, loaded only where Redis is configured: a start without it does not pay for the module. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ioredis = () => require('ioredis') as typeof import('ioredis');

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
  const client = new (ioredis().Redis)(opts.url, {
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
