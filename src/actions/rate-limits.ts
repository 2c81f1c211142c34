import os from 'node:os';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { openRateLimitRedis, RATE_LIMIT_REDIS_TIMEOUT_MS } from '../db/rate-limit-redis';
import { closeRedis } from '../events/redis-calls';
import { createRateLimiter } from '../db/rate-limit-store';
import { PASSWORD_RESET_BY_EMAIL, SENDS_EMAIL_BY_IP } from '../domain/password-reset';
import {
  EMAIL_GATEWAY_REALM_RULE,
  rateLimitedError,
  type RateLimitKind,
  type RateLimitNotes,
  type RateLimitResult,
} from '../domain/rate-limits';

/**
 * Zulip's rate limits over one store: `consume` counts a request against a
 * key's limit, notes the result (for the X-RateLimit-* headers) and throws
 * Zulip's 429 when the key is over it; `reset` forgets a key (a successful
 * login clears its username's failures, as Zulip's does).
 */
export class RateLimits {
  constructor(
    private readonly limiters: Record<RateLimitKind, RateLimiterAbstract> | null,
    /** The connection of RATE_LIMIT_STORE=redis (health, metrics, shutdown); null for the other stores. */
    readonly redis: Redis | null = null,
  ) {}

  private log: Logger | null = null;
  private lastLogged = 0;
  private closing = false;

  /** Where Redis connection errors go, once the server has its logger (src/server.ts). */
  setLogger(log: Logger): void {
    this.log = log;
  }

  /** A Redis outage repeats the same error at every reconnection attempt: at most one line a second. */
  reportRedisError(err: unknown): void {
    if (this.closing) return;
    const now = Date.now();
    if (now - this.lastLogged < 1000) return;
    this.lastLogged = now;
    this.log?.warn({ err }, 'rate limits: Redis unreachable, counting in this process meanwhile');
  }

  get enabled(): boolean {
    return this.limiters !== null;
  }

  async consume(kind: RateLimitKind, key: string, notes: RateLimitNotes): Promise<void> {
    if (!this.limiters) return;
    const limiter = this.limiters[kind];
    let result: RateLimitResult;
    try {
      const res = await limiter.consume(key);
      result = { limit: limiter.points, remaining: res.remainingPoints, secondsToFreedom: res.msBeforeNext / 1000, limited: false };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      result = { limit: limiter.points, remaining: 0, secondsToFreedom: err.msBeforeNext / 1000, limited: true };
    }
    notes.add(result);
    if (result.limited) throw rateLimitedError(result.secondsToFreedom);
  }

  async reset(kind: RateLimitKind, key: string): Promise<void> {
    await this.limiters?.[kind].delete(key);
  }

  /** Closes the Redis connection, if any (shutdown). */
  async close(): Promise<void> {
    this.closing = true;
    if (this.redis) await closeRedis(this.redis, RATE_LIMIT_REDIS_TIMEOUT_MS);
  }
}

/**
 * The limits the configuration asks for, in the store it names (RATE_LIMITS=off: none).
 * With RATE_LIMIT_STORE=redis the limiters share one connection, opened here.
 */
export function createRateLimits(db: Knex, config: Config): RateLimits {
  if (!config.rateLimits) return new RateLimits(null);
  let limits: RateLimits | null = null;
  const redis =
    config.rateLimitStore === 'redis'
      ? openRateLimitRedis({
          url: config.redisUrl!,
          name: `parley-${config.nodeId ?? `${os.hostname()}-${process.pid}`}-rl`,
          onError: (err) => limits?.reportRedisError(err),
        })
      : null;
  const make = (name: string, points: number, durationSeconds: number) =>
    createRateLimiter(config.rateLimitStore, { db, redis }, name, { points, durationSeconds });
  limits = new RateLimits(
    {
      user: make('user', config.rateLimitUserPerMinute, 60),
      ip: make('ip', config.rateLimitIpPerMinute, 60),
      authByUsername: make('auth', config.rateLimitAuthAttempts, config.rateLimitAuthWindowSeconds),
      passwordResetByEmailHour: make('reset-hour', PASSWORD_RESET_BY_EMAIL[0]!.points, PASSWORD_RESET_BY_EMAIL[0]!.durationSeconds),
      passwordResetByEmailDay: make('reset-day', PASSWORD_RESET_BY_EMAIL[1]!.points, PASSWORD_RESET_BY_EMAIL[1]!.durationSeconds),
      sendsEmailByIp: make('email-ip', SENDS_EMAIL_BY_IP.points, SENDS_EMAIL_BY_IP.durationSeconds),
      emailGatewayRealm: make('email-realm', EMAIL_GATEWAY_REALM_RULE.points, EMAIL_GATEWAY_REALM_RULE.durationSeconds),
    },
    redis,
  );
  return limits;
}
