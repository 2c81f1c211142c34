import {
  boolean,
  databaseUrl,
  directory,
  hostName,
  listenerUrl,
  httpUrl,
  LOG_LEVELS,
  oneOf,
  optionalHttpUrl,
  portNumber,
  positiveInt,
  nonNegativeInt,
  setting,
  settingOrDefault,
} from './checks';
import { eventBusSettings } from './event-bus';
import type { RateLimitStore } from '../domain/rate-limits';
import { rateLimitStoreSetting } from './rate-limits';
import { trustedProxiesSetting } from './proxies';
import { outgoingWebhookSettings } from './outgoing-webhooks';
import { emailGatewaySettings, type EmailGatewaySettings } from './email-gateway';
import { emailSettings } from './email';

/** Typed configuration, read once from the environment (the email gateway's settings: src/config/email-gateway.ts). */
export interface Config extends EmailGatewaySettings {
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
  /** Seconds a browser session, and its cookies, last after login (Zulip's SESSION_COOKIE_AGE, Django's default of two weeks). */
  sessionCookieAge: number;
  /** The web client's built files (index.html, assets/); null: web/dist of the repository (src/http/web-app.ts). */
  webDistDir: string | null;
  /** Uploads no message links are deleted this many days after upload (Zulip's delete_unclaimed_attachments: five weeks). */
  unclaimedUploadsGraceDays: number;
  /** How often the server looks for such uploads, and how many it deletes each time. */
  uploadSweepIntervalMs: number;
  uploadSweepBatchSize: number;
  /**
   * How often the retention archiver runs (src/actions/retention.ts): each
   * run archives every message past its retention period, in transactions
   * of `retentionBatchSize` messages (Zulip: 100 per channel batch).
   */
  retentionIntervalMs: number;
  retentionBatchSize: number;
  /**
   * Archived messages (deletions and retention alike) stay restorable this
   * many days after their archiving, then the archiver's run deletes them
   * for good (Zulip's ARCHIVED_DATA_VACUUMING_DELAY_DAYS, 30).
   */
  archivedDataVacuumDays: number;
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
   * POST /mark_all_as_read (and /mark_stream_as_read, /mark_topic_as_read)
   * marks this many unread messages read per transaction, newest first
   * (Zulip: 2,000)...
   */
  markReadBatchSize: number;
  /** ...and POST /mark_all_as_read starts no new batch after this many milliseconds, answering complete:false (Zulip: 50 s). */
  markReadTimeBudgetMs: number;
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
  /** Where the counters live: this process's memory, or the database or Redis (REDIS_URL) every process shares. */
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
  imageTimeoutSeconds: number;
  tusMaxUnfinishedUploads: number;
  tusMaxUnfinishedMib: number;
  /** Connections in the MariaDB pool (SQLite always has one). */
  dbPoolMax: number;
  /** Port of the Prometheus listener (GET /metrics); null: no metrics are served at all. */
  metricsPort: number | null;
  /** Where that listener binds: loopback unless said otherwise, whatever HOST is. */
  metricsHost: string;
  /** On SIGTERM/SIGINT, requests in flight get this long to finish before their connections are cut. */
  shutdownTimeoutMs: number;
  /**
   * This process's name among the nodes of a cluster (docs/deployment.md):
   * its event queue ids become `<node>:<uuid>`, so a load balancer routes
   * GET/DELETE /events to the node that holds the queue. Null: bare UUIDs.
   */
  nodeId: string | null;
  /** How events and cache invalidations reach the queues: this process only, or every node through Redis. */
  eventBus: 'memory' | 'redis';
  /** The Redis server of EVENT_BUS=redis. */
  redisUrl: string | null;
  /** Entries the Redis event stream keeps (approximately); a node further behind drops its queues. */
  redisStreamMaxLen: number;
  /** Entries of the per-process caches (docs/adr/0011-caches.md): callers by API key and users by id, organizations, channels to send to. */
  cacheUsers: number;
  cacheRealms: number;
  cacheChannels: number;
  /**
   * Longest time a cached entry is kept: a backstop for rows changed behind
   * the server's back (hand-edited SQL); every change Parley makes drops its
   * entries at once.
   */
  cacheTtlSeconds: number;
  /** How often the server reads the invalidations other processes (the CLI) wrote to cache_invalidations. */
  cachePollMs: number;
  /** Rendered messages kept per process (src/cache/messages.ts); 0 turns the cache off. */
  cacheMessages: number;
  /** A full collection after this long without a request (src/idle-collection.ts); 0: none. */
  idleCollectSeconds: number;
  /** Users go idle after more than this many whole days without a request (ADR 0058); 0: never. */
  softDeactivationDays: number;
  /**
   * SQLite: read-only connections beside the one writer, for statements outside
   * a transaction (0: every statement on the writer). One is enough in one
   * process: the driver (better-sqlite3's synchronous API) runs a statement to its
   * end before anything else runs.
   */
  sqliteReaders: number;
  /** Proxies whose X-Forwarded-For gives the client's address (src/config/proxies.ts); none by default. */
  trustedProxies: string[];
  /**
   * Private hosts, addresses and CIDR ranges outgoing webhooks may reach
   * (src/domain/outgoing-webhook-urls.ts); none by default.
   */
  outgoingWebhookAllowedHosts: string[];
  /** How long an outgoing webhook's answer may take before the request counts as timed out (Zulip: 10 s). */
  outgoingWebhookTimeoutSeconds: number;
  /** The SMTP server (src/config/email.ts); null: mail is written to DATA_DIR/emails/. */
  emailHost: string | null;
  emailPort: number;
  /** SMTP authentication: both set, or neither (none). */
  emailHostUser: string | null;
  emailHostPassword: string | null;
  /** STARTTLS after connecting. */
  emailUseTls: boolean;
  /** TLS from the start (never with emailUseTls). */
  emailUseSsl: boolean;
  /** The From address of every mail. */
  noreplyEmailAddress: string;
  /** How long connecting and each SMTP answer may take; an attempt as a whole, three times that. */
  emailTimeoutSeconds: number;
  /** Attempts per mail before it is marked failed. */
  emailMaxAttempts: number;
  /** The first retry's delay, doubled per attempt up to an hour. */
  emailRetrySeconds: number;
}

/** A database URL as messages show it: the password replaced. */
export { withoutPassword } from './checks';
/** Every setting this reads, and the lines --help lists them with. */
export { SETTINGS, settingsHelp } from './settings';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = hostName('HOST', settingOrDefault(env, 'HOST'));
  const port = portNumber('PORT', settingOrDefault(env, 'PORT'));
  const metricsPort = setting(env, 'METRICS_PORT');
  const externalUrl = httpUrl('EXTERNAL_URL', setting(env, 'EXTERNAL_URL') ?? listenerUrl(host, port)).replace(/\/+$/, '');
  return {
    host,
    port,
    dataDir: directory('DATA_DIR', settingOrDefault(env, 'DATA_DIR')),
    databaseUrl: databaseUrl('DATABASE_URL', setting(env, 'DATABASE_URL')),
    externalUrl,
    logLevel: oneOf('LOG_LEVEL', settingOrDefault(env, 'LOG_LEVEL'), LOG_LEVELS),
    validateResponses: boolean('VALIDATE_RESPONSES', settingOrDefault(env, 'VALIDATE_RESPONSES')),
    maxFileUploadSizeMib: positiveInt('MAX_FILE_UPLOAD_SIZE_MIB', settingOrDefault(env, 'MAX_FILE_UPLOAD_SIZE_MIB')),
    secretKey: setting(env, 'SECRET_KEY') ?? null,
    sessionCookieAge: positiveInt('SESSION_COOKIE_AGE', settingOrDefault(env, 'SESSION_COOKIE_AGE')),
    webDistDir: setting(env, 'WEB_DIST_DIR') ?? null,
    unclaimedUploadsGraceDays: positiveInt('UNCLAIMED_UPLOADS_GRACE_DAYS', settingOrDefault(env, 'UNCLAIMED_UPLOADS_GRACE_DAYS')),
    uploadSweepIntervalMs: positiveInt('UPLOAD_SWEEP_INTERVAL_MS', settingOrDefault(env, 'UPLOAD_SWEEP_INTERVAL_MS')),
    uploadSweepBatchSize: positiveInt('UPLOAD_SWEEP_BATCH_SIZE', settingOrDefault(env, 'UPLOAD_SWEEP_BATCH_SIZE')),
    retentionIntervalMs: positiveInt('RETENTION_INTERVAL_MS', settingOrDefault(env, 'RETENTION_INTERVAL_MS')),
    retentionBatchSize: positiveInt('RETENTION_BATCH_SIZE', settingOrDefault(env, 'RETENTION_BATCH_SIZE')),
    archivedDataVacuumDays: positiveInt('ARCHIVED_DATA_VACUUM_DAYS', settingOrDefault(env, 'ARCHIVED_DATA_VACUUM_DAYS')),
    webPublicStreamsEnabled: boolean('WEB_PUBLIC_STREAMS_ENABLED', settingOrDefault(env, 'WEB_PUBLIC_STREAMS_ENABLED')),
    deleteTopicBatchSize: positiveInt('DELETE_TOPIC_BATCH_SIZE', settingOrDefault(env, 'DELETE_TOPIC_BATCH_SIZE')),
    deleteTopicTimeBudgetMs: positiveInt('DELETE_TOPIC_TIME_BUDGET_MS', settingOrDefault(env, 'DELETE_TOPIC_TIME_BUDGET_MS')),
    markReadBatchSize: positiveInt('MARK_READ_BATCH_SIZE', settingOrDefault(env, 'MARK_READ_BATCH_SIZE')),
    markReadTimeBudgetMs: positiveInt('MARK_READ_TIME_BUDGET_MS', settingOrDefault(env, 'MARK_READ_TIME_BUDGET_MS')),
    pushRelayUrl: optionalHttpUrl('PUSH_RELAY_URL', setting(env, 'PUSH_RELAY_URL'))?.replace(/\/+$/, '') ?? null,
    pushRelayBackoffMs: positiveInt('PUSH_RELAY_BACKOFF_MS', settingOrDefault(env, 'PUSH_RELAY_BACKOFF_MS')),
    pushRelayMaxAttempts: positiveInt('PUSH_RELAY_MAX_ATTEMPTS', settingOrDefault(env, 'PUSH_RELAY_MAX_ATTEMPTS')),
    rateLimits: oneOf('RATE_LIMITS', settingOrDefault(env, 'RATE_LIMITS'), ['on', 'off'] as const) === 'on',
    rateLimitStore: rateLimitStoreSetting(env),
    rateLimitUserPerMinute: positiveInt('RATE_LIMIT_USER_PER_MINUTE', settingOrDefault(env, 'RATE_LIMIT_USER_PER_MINUTE')),
    rateLimitIpPerMinute: positiveInt('RATE_LIMIT_IP_PER_MINUTE', settingOrDefault(env, 'RATE_LIMIT_IP_PER_MINUTE')),
    rateLimitAuthAttempts: positiveInt('RATE_LIMIT_AUTH_ATTEMPTS', settingOrDefault(env, 'RATE_LIMIT_AUTH_ATTEMPTS')),
    rateLimitAuthWindowSeconds: positiveInt('RATE_LIMIT_AUTH_WINDOW_SECONDS', settingOrDefault(env, 'RATE_LIMIT_AUTH_WINDOW_SECONDS')),
    imageTimeoutSeconds: positiveInt('IMAGE_TIMEOUT_SECONDS', settingOrDefault(env, 'IMAGE_TIMEOUT_SECONDS')),
    tusUploadExpiryHours: positiveInt('TUS_UPLOAD_EXPIRY_HOURS', settingOrDefault(env, 'TUS_UPLOAD_EXPIRY_HOURS')),
    tusMaxUnfinishedUploads: positiveInt('TUS_MAX_UNFINISHED_UPLOADS', settingOrDefault(env, 'TUS_MAX_UNFINISHED_UPLOADS')),
    tusMaxUnfinishedMib: positiveInt('TUS_MAX_UNFINISHED_MIB', settingOrDefault(env, 'TUS_MAX_UNFINISHED_MIB')),
    dbPoolMax: positiveInt('DB_POOL_MAX', settingOrDefault(env, 'DB_POOL_MAX')),
    metricsPort: metricsPort === undefined ? null : portNumber('METRICS_PORT', metricsPort),
    metricsHost: hostName('METRICS_HOST', settingOrDefault(env, 'METRICS_HOST')),
    shutdownTimeoutMs: positiveInt('SHUTDOWN_TIMEOUT_MS', settingOrDefault(env, 'SHUTDOWN_TIMEOUT_MS')),
    ...eventBusSettings(env),
    cacheUsers: positiveInt('CACHE_USERS', settingOrDefault(env, 'CACHE_USERS')),
    cacheRealms: positiveInt('CACHE_REALMS', settingOrDefault(env, 'CACHE_REALMS')),
    cacheChannels: positiveInt('CACHE_CHANNELS', settingOrDefault(env, 'CACHE_CHANNELS')),
    cacheTtlSeconds: positiveInt('CACHE_TTL_SECONDS', settingOrDefault(env, 'CACHE_TTL_SECONDS')),
    cachePollMs: positiveInt('CACHE_POLL_MS', settingOrDefault(env, 'CACHE_POLL_MS')),
    cacheMessages: nonNegativeInt('CACHE_MESSAGES', settingOrDefault(env, 'CACHE_MESSAGES')),
    idleCollectSeconds: nonNegativeInt('IDLE_COLLECT_SECONDS', settingOrDefault(env, 'IDLE_COLLECT_SECONDS')),
    softDeactivationDays: nonNegativeInt('SOFT_DEACTIVATION_DAYS', settingOrDefault(env, 'SOFT_DEACTIVATION_DAYS')),
    sqliteReaders: Number(oneOf('SQLITE_READERS', settingOrDefault(env, 'SQLITE_READERS'), ['0', '1', '2', '3', '4'] as const)),
    trustedProxies: trustedProxiesSetting(env),
    ...outgoingWebhookSettings(env),
    ...emailGatewaySettings(env),
    ...emailSettings(env, externalUrl),
  };
}
