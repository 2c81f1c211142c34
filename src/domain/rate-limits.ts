import { ApiError } from '../errors';

/**
 * Zulip's default rate limits (its RATE_LIMITING_RULES): API requests per
 * authenticated user, API requests per client address for unauthenticated
 * requests, password attempts per username, password reset mail per
 * address (two windows) and per client address (src/domain/password-reset.ts),
 * and mails to channel addresses per organization (its
 * RATE_LIMITING_MIRROR_REALM_RULES; the first of them, 50 a minute:
 * EMAIL_GATEWAY_REALM_RULE).
 */
export type RateLimitKind =
  'user' | 'ip' | 'authByUsername' | 'passwordResetByEmailHour' | 'passwordResetByEmailDay' | 'sendsEmailByIp' | 'emailGatewayRealm';

export const EMAIL_GATEWAY_REALM_RULE: RateLimitRule = { points: 50, durationSeconds: 60 };

/**
 * Where rate-limit counters live (RATE_LIMIT_STORE; docs/adr/0010-rate-limits.md):
 * - `memory`: this process's memory. No I/O per request; each server process
 *   counts on its own.
 * - `database`: the `rate_limits` table (migration 014) of Parley's own
 *   database, so every process on that database shares one count, at one
 *   database write per limited request.
 * - `redis`: the Redis server of REDIS_URL, shared by every process that
 *   names it, at one round trip per limited request and no database write.
 * Another store is one more case in src/db/rate-limit-store.ts.
 */
export type RateLimitStore = 'memory' | 'database' | 'redis';

export const RATE_LIMIT_STORES: readonly RateLimitStore[] = ['memory', 'database', 'redis'];

export interface RateLimitRule {
  points: number;
  durationSeconds: number;
}

/** One limit as it applied to one request (Zulip's RateLimitResult). */
export interface RateLimitResult {
  /** Requests the limit allows per window. */
  limit: number;
  /** Requests still allowed in the current window after this one (0 when refused). */
  remaining: number;
  /** Seconds until the window ends: then the client has no limit applied to it. */
  secondsToFreedom: number;
  limited: boolean;
}

/**
 * The limits applied to one request so far, as Zulip's request notes keep
 * them: the pipeline adds the per-user or per-address limit, the login
 * action the per-username one; every addition rewrites the headers.
 */
export class RateLimitNotes {
  readonly applied: RateLimitResult[] = [];

  constructor(private readonly onChange: (headers: Record<string, string>) => void = () => {}) {}

  add(result: RateLimitResult): void {
    this.applied.push(result);
    this.onChange(rateLimitHeaders(this.applied, Date.now()));
  }
}

/**
 * Zulip's X-RateLimit-* headers when several limits applied: the strictest
 * limit, the fewest remaining requests, and the latest reset (a Unix time in
 * whole seconds: the moment no limit applies any more).
 */
export function rateLimitHeaders(applied: readonly RateLimitResult[], nowMs: number): Record<string, string> {
  if (!applied.length) return {};
  const limit = Math.min(...applied.map((r) => r.limit));
  const remaining = Math.min(...applied.map((r) => r.remaining));
  const reset = Math.floor(nowMs / 1000 + Math.max(...applied.map((r) => r.secondsToFreedom)));
  return { 'X-RateLimit-Limit': String(limit), 'X-RateLimit-Remaining': String(remaining), 'X-RateLimit-Reset': String(reset) };
}

/**
 * Zulip's 429: the seconds to wait both in the body (`retry-after`) and in
 * the Retry-After header. Zulip sends that header as the same fractional
 * number of seconds, not rounded to a whole second; so does Parley (to the
 * millisecond).
 */
export function rateLimitedError(secondsToFreedom: number): ApiError {
  const seconds = Math.max(0, Math.round(secondsToFreedom * 1000) / 1000);
  return new ApiError(
    'API usage exceeded rate limit',
    'RATE_LIMIT_HIT',
    429,
    { 'retry-after': seconds },
    { 'Retry-After': String(seconds) },
  );
}

/** The key of a client address: an IPv4 client of a dual-stack socket is the same client as over IPv4. */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
