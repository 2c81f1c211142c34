import path from 'node:path';
import { RATE_LIMIT_STORES, type RateLimitStore } from './domain/rate-limits';

/** Typed configuration, read once from the environment. */
export interface Config {
  host: string;
  port: number;
  /** Directory for the embedded database, uploads and the owner's zuliprc. */
  dataDir: string;
  /** mysql://user:pass@host:port/db selects MySQL/MariaDB; unset means SQLite under dataDir. */
  databaseUrl: string | null;
  /** The URL clients use to reach this server (realm_url, zuliprc site). */
  externalUrl: string;
  logLevel: string;
  /** Validate responses against openapi/ (dredd runs and debugging; off in production). */
  validateResponses: boolean;
  maxFileUploadSizeMib: number;
  /**
   * The server's signing secret (temporary file URLs). Unset: a random one
   * kept in DATA_DIR/secret_key, shared by every process on that directory.
   */
  secretKey: string | null;
  /** Uploads no message links are deleted this many days after upload (Zulip's delete_unclaimed_attachments: five weeks). */
  unclaimedUploadsGraceDays: number;
  /** How often the server looks for such uploads, and how many it deletes each time. */
  uploadSweepIntervalMs: number;
  uploadSweepBatchSize: number;
  /** The server setting WEB_PUBLIC_STREAMS_ENABLED: organizations may then allow spectators. */
  webPublicStreamsEnabled: boolean;
  /**
   * POST /streams/{id}/delete_topic deletes this many messages per
   * transaction, newest first (Zulip: 100)...
   */
  deleteTopicBatchSize: number;
  /** ...and starts no new batch after this many milliseconds, answering complete:false (Zulip: 50 s). */
  deleteTopicTimeBudgetMs: number;
  /**
   * Base URL of the push notification relay (Zulip's "push notification
   * service"); null means push is not configured and POST /mobile_push/register
   * answers PUSH_SERVICE_NOT_CONFIGURED.
   */
  pushRelayUrl: string | null;
  /** First retry delay after a failed relay request, doubled per attempt (capped at 5 minutes). */
  pushRelayBackoffMs: number;
  /** Attempts per relay request before it is dropped (and logged). */
  pushRelayMaxAttempts: number;
  /** Zulip's rate limits (docs/adr/0010-rate-limits.md); RATE_LIMITS=off turns them all off. */
  rateLimits: boolean;
  /** Where the counters live: this process's memory, or the database every process shares. */
  rateLimitStore: RateLimitStore;
  /** API requests per minute per authenticated user (Zulip: 200). */
  rateLimitUserPerMinute: number;
  /** API requests per minute per client address, for unauthenticated requests (Zulip: 100). */
  rateLimitIpPerMinute: number;
  /** Password attempts per username (POST /fetch_api_key) in RATE_LIMIT_AUTH_WINDOW_SECONDS (Zulip: 5 in 30 minutes). */
  rateLimitAuthAttempts: number;
  rateLimitAuthWindowSeconds: number;
  /**
   * A resumable (tus) upload still unfinished this many hours after its
   * creation is abandoned: tus answers 410 Gone and the upload sweep deletes
   * its bytes.
   */
  tusUploadExpiryHours: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.HOST ?? '127.0.0.1';
  const port = parsePort(env.PORT ?? '9991');
  return {
    host,
    port,
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    databaseUrl: env.DATABASE_URL?.trim() || null,
    externalUrl: (env.EXTERNAL_URL ?? `http://${host}:${port}`).replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL ?? 'info',
    validateResponses: env.VALIDATE_RESPONSES === '1' || env.VALIDATE_RESPONSES === 'true',
    maxFileUploadSizeMib: Number(env.MAX_FILE_UPLOAD_SIZE_MIB ?? 100),
    secretKey: env.SECRET_KEY?.trim() || null,
    unclaimedUploadsGraceDays: positiveInt('UNCLAIMED_UPLOADS_GRACE_DAYS', env.UNCLAIMED_UPLOADS_GRACE_DAYS ?? '35'),
    uploadSweepIntervalMs: positiveInt('UPLOAD_SWEEP_INTERVAL_MS', env.UPLOAD_SWEEP_INTERVAL_MS ?? '600000'),
    uploadSweepBatchSize: positiveInt('UPLOAD_SWEEP_BATCH_SIZE', env.UPLOAD_SWEEP_BATCH_SIZE ?? '100'),
    webPublicStreamsEnabled: env.WEB_PUBLIC_STREAMS_ENABLED !== 'false',
    deleteTopicBatchSize: positiveInt('DELETE_TOPIC_BATCH_SIZE', env.DELETE_TOPIC_BATCH_SIZE ?? '100'),
    deleteTopicTimeBudgetMs: positiveInt('DELETE_TOPIC_TIME_BUDGET_MS', env.DELETE_TOPIC_TIME_BUDGET_MS ?? '50000'),
    pushRelayUrl: env.PUSH_RELAY_URL?.trim().replace(/\/+$/, '') || null,
    pushRelayBackoffMs: positiveInt('PUSH_RELAY_BACKOFF_MS', env.PUSH_RELAY_BACKOFF_MS ?? '1000'),
    pushRelayMaxAttempts: positiveInt('PUSH_RELAY_MAX_ATTEMPTS', env.PUSH_RELAY_MAX_ATTEMPTS ?? '8'),
    rateLimits: onOff('RATE_LIMITS', env.RATE_LIMITS ?? 'on'),
    rateLimitStore: rateLimitStore(env.RATE_LIMIT_STORE ?? 'memory'),
    rateLimitUserPerMinute: positiveInt('RATE_LIMIT_USER_PER_MINUTE', env.RATE_LIMIT_USER_PER_MINUTE ?? '200'),
    rateLimitIpPerMinute: positiveInt('RATE_LIMIT_IP_PER_MINUTE', env.RATE_LIMIT_IP_PER_MINUTE ?? '100'),
    rateLimitAuthAttempts: positiveInt('RATE_LIMIT_AUTH_ATTEMPTS', env.RATE_LIMIT_AUTH_ATTEMPTS ?? '5'),
    rateLimitAuthWindowSeconds: positiveInt('RATE_LIMIT_AUTH_WINDOW_SECONDS', env.RATE_LIMIT_AUTH_WINDOW_SECONDS ?? '1800'),
    tusUploadExpiryHours: positiveInt('TUS_UPLOAD_EXPIRY_HOURS', env.TUS_UPLOAD_EXPIRY_HOURS ?? '24'),
  };
}

function parsePort(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`PORT must be an integer 0..65535, got ${raw}`);
  return n;
}

function positiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

function onOff(name: string, raw: string): boolean {
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new Error(`${name} must be on or off, got ${raw}`);
}

function rateLimitStore(raw: string): RateLimitStore {
  const store = RATE_LIMIT_STORES.find((s) => s === raw);
  if (!store) throw new Error(`RATE_LIMIT_STORE must be one of ${RATE_LIMIT_STORES.join(', ')}, got ${raw}`);
  return store;
}
