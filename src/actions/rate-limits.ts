import type { Knex } from 'knex';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { createRateLimiter } from '../db/rate-limit-store';
import { rateLimitedError, type RateLimitKind, type RateLimitNotes, type RateLimitResult } from '../domain/rate-limits';

/**
 * Zulip's rate limits over one store: `consume` counts a request against a
 * key's limit, notes the result (for the X-RateLimit-* headers) and throws
 * Zulip's 429 when the key is over it; `reset` forgets a key (a successful
 * login clears its username's failures, as Zulip's does).
 */
export class RateLimits {
  constructor(private readonly limiters: Record<RateLimitKind, RateLimiterAbstract> | null) {}

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
}

/** The limits the configuration asks for, in the store it names (RATE_LIMITS=off: none). */
export function createRateLimits(db: Knex, config: Config): RateLimits {
  if (!config.rateLimits) return new RateLimits(null);
  const make = (name: string, points: number, durationSeconds: number) =>
    createRateLimiter(config.rateLimitStore, db, name, { points, durationSeconds });
  return new RateLimits({
    user: make('user', config.rateLimitUserPerMinute, 60),
    ip: make('ip', config.rateLimitIpPerMinute, 60),
    authByUsername: make('auth', config.rateLimitAuthAttempts, config.rateLimitAuthWindowSeconds),
  });
}
