/**
 * Every setting (environment variable) Parley reads, with its default and a
 * line for the command line's --help. loadConfig reads a setting only
 * through `setting`/`settingOrDefault` (src/config/checks.ts), which accept
 * only names listed here and take the defaults from here: a setting cannot be
 * read without being listed, nor its default differ from what --help says.
 * docs/deployment.md's Configuration table says more about each.
 */
export const SETTINGS = {
  HOST: { default: '127.0.0.1', about: 'address the API listens on' },
  PORT: { default: '9991', about: 'port the API listens on (0: a free one)' },
  DATA_DIR: { default: './data', about: "SQLite database, uploads, the owner's zuliprc" },
  DATABASE_URL: { about: 'mysql://user:pass@host:port/db selects MySQL/MariaDB (unset: SQLite in DATA_DIR)' },
  EXTERNAL_URL: {
    about: 'the URL clients use (default http://HOST:PORT): the root organization is there, organization ID at ID. before its host',
  },
  LOG_LEVEL: { default: 'info', about: 'fatal, error, warn, info, debug, trace or silent' },
  VALIDATE_RESPONSES: { default: 'false', about: 'validate every response against openapi/' },
  MAX_FILE_UPLOAD_SIZE_MIB: { default: '100', about: 'upload limit in MiB' },
  SECRET_KEY: { about: 'signs temporary file URLs (unset: a random one kept in DATA_DIR/secret_key)' },
  SESSION_COOKIE_AGE: { default: '1209600', about: "seconds a browser session lasts after its login (Django's default, two weeks)" },
  WEB_DIST_DIR: { about: "the web client's built files (default: web/dist in the repository; missing: `/` is the organization's page)" },
  UNCLAIMED_UPLOADS_GRACE_DAYS: { default: '35', about: 'uploads no message links are deleted after this many days' },
  UPLOAD_SWEEP_INTERVAL_MS: { default: '600000', about: 'how often that sweep runs' },
  UPLOAD_SWEEP_BATCH_SIZE: { default: '100', about: 'how many uploads it deletes each time' },
  RETENTION_INTERVAL_MS: { default: '3600000', about: 'how often messages past their retention period are archived' },
  RETENTION_BATCH_SIZE: { default: '100', about: 'messages the retention archiver moves (or vacuums) per transaction' },
  ARCHIVED_DATA_VACUUM_DAYS: { default: '30', about: 'archived messages are restorable this many days, then deleted' },
  WEB_PUBLIC_STREAMS_ENABLED: { default: 'true', about: 'organizations may allow spectators' },
  DELETE_TOPIC_BATCH_SIZE: { default: '100', about: 'messages per transaction of delete_topic' },
  DELETE_TOPIC_TIME_BUDGET_MS: { default: '50000', about: 'after this long delete_topic answers complete: false' },
  MARK_READ_BATCH_SIZE: {
    default: '2000',
    about: 'messages marked read per transaction of mark_all_as_read and its channel and topic forms',
  },
  MARK_READ_TIME_BUDGET_MS: { default: '50000', about: 'after this long mark_all_as_read answers complete: false' },
  PUSH_RELAY_URL: { about: 'the push notification relay (unset: no push notifications)' },
  PUSH_RELAY_BACKOFF_MS: { default: '1000', about: 'first retry delay after a failed relay request, doubled per attempt' },
  PUSH_RELAY_MAX_ATTEMPTS: { default: '8', about: 'attempts per relay request' },
  RATE_LIMITS: { default: 'on', about: "Zulip's rate limits: on or off" },
  RATE_LIMIT_STORE: { default: 'memory', about: 'where rate limit counters live: memory, database or redis' },
  RATE_LIMIT_USER_PER_MINUTE: { default: '200', about: 'API requests a minute per user' },
  RATE_LIMIT_IP_PER_MINUTE: { default: '100', about: 'API requests a minute per address, without credentials' },
  RATE_LIMIT_AUTH_ATTEMPTS: { default: '5', about: 'password attempts per username in the window below' },
  RATE_LIMIT_AUTH_WINDOW_SECONDS: { default: '1800', about: 'the window of those attempts' },
  IMAGE_TIMEOUT_SECONDS: { default: '20', about: 'longest an avatar or custom emoji image may take to process' },
  TUS_UPLOAD_EXPIRY_HOURS: { default: '24', about: 'a resumable upload unfinished this long is abandoned' },
  TUS_MAX_UNFINISHED_UPLOADS: { default: '10', about: 'resumable uploads a user may have unfinished at once' },
  TUS_MAX_UNFINISHED_MIB: { default: '300', about: "MiB a user's unfinished resumable uploads may declare together" },
  DB_POOL_MAX: { default: '10', about: 'connections in the MariaDB pool' },
  METRICS_PORT: { about: 'serve Prometheus metrics on this port (unset: none)' },
  METRICS_HOST: { default: '127.0.0.1', about: 'address the metrics listener binds to' },
  SHUTDOWN_TIMEOUT_MS: { default: '10000', about: 'on SIGTERM/SIGINT, how long requests in flight may take' },
  NODE_ID: { about: "this node's name in a cluster (event queue ids become <node>:<uuid>)" },
  EVENT_BUS: { default: 'memory', about: 'memory (this process) or redis (every node, through REDIS_URL)' },
  REDIS_URL: { about: 'redis://host:port, for EVENT_BUS=redis or RATE_LIMIT_STORE=redis' },
  REDIS_STREAM_MAXLEN: { default: '100000', about: 'entries the Redis event stream keeps' },
  CACHE_USERS: { default: '10000', about: 'callers and users each process caches' },
  CACHE_REALMS: { default: '1000', about: 'organizations each process caches' },
  CACHE_CHANNELS: { default: '10000', about: 'channels each process caches' },
  CACHE_TTL_SECONDS: { default: '300', about: 'longest a cached entry is kept' },
  CACHE_POLL_MS: { default: '250', about: 'how often a server reads what CLI commands changed' },
  CACHE_MESSAGES: { default: '10000', about: 'rendered messages each process keeps (0: none)' },
  IDLE_COLLECT_SECONDS: { default: '10', about: 'a full garbage collection after this long without requests (0: never)' },
  SOFT_DEACTIVATION_DAYS: { default: '28', about: 'users go idle after more than this many days without a request (0: never)' },
  SQLITE_READERS: { default: '1', about: 'read-only SQLite connections beside the writer, 0..4' },
  TRUSTED_PROXIES: { about: "load balancers whose X-Forwarded-For gives the client's address" },
  OUTGOING_WEBHOOK_ALLOWED_HOSTS: { about: 'private hosts, addresses and CIDR ranges outgoing webhooks may reach' },
  OUTGOING_WEBHOOK_TIMEOUT_SECONDS: { default: '10', about: "how long an outgoing webhook's answer may take" },
  EMAIL_GATEWAY_PATTERN: { about: 'incoming email addresses, one %s for the channel or conversation (unset: no gateway)' },
  EMAIL_GATEWAY_PORT: { about: 'listen for incoming email (SMTP) on this port (unset: none)' },
  EMAIL_GATEWAY_HOST: { default: '127.0.0.1', about: 'address the incoming email listener binds to' },
  EMAIL_GATEWAY_MAX_MESSAGE_MIB: { default: '32', about: 'largest incoming email accepted, in MiB' },
  EMAIL_GATEWAY_TLS_CERT: { about: 'PEM certificate: the incoming email listener offers STARTTLS' },
  EMAIL_GATEWAY_TLS_KEY: { about: "that certificate's PEM private key" },
  EMAIL_HOST: { about: 'the SMTP server mail is sent through (unset: each mail is written to DATA_DIR/emails/)' },
  EMAIL_PORT: { about: 'its port (unset: 465 with EMAIL_USE_SSL, 587 with EMAIL_USE_TLS, else 25)' },
  EMAIL_HOST_USER: { about: 'user name for SMTP authentication (unset: none)' },
  EMAIL_HOST_PASSWORD: { about: 'password for SMTP authentication' },
  EMAIL_USE_TLS: { default: 'false', about: 'STARTTLS after connecting (typically port 587)' },
  EMAIL_USE_SSL: { default: 'false', about: 'TLS from the start (typically port 465); not with EMAIL_USE_TLS' },
  NOREPLY_EMAIL_ADDRESS: { about: 'the From address of every mail (default noreply@ the host of EXTERNAL_URL)' },
  EMAIL_TIMEOUT_SECONDS: { default: '30', about: "how long connecting and each of the SMTP server's answers may take" },
  EMAIL_MAX_ATTEMPTS: { default: '10', about: 'attempts per mail before it is marked failed' },
  EMAIL_RETRY_SECONDS: { default: '30', about: 'first retry delay of a mail not taken, doubled per attempt (at most an hour)' },
} as const satisfies Record<string, { default?: string; about: string }>;

export type SettingName = keyof typeof SETTINGS;

/** The settings that have a default of their own (EXTERNAL_URL's is made from HOST and PORT). */
export type SettingWithDefault = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { default: string } ? K : never;
}[SettingName];

/** The settings as --help lists them: `NAME=default` (or `NAME`) and what it is, one a line. */
export function settingsHelp(indent = '  '): string {
  const entries = Object.entries(SETTINGS).map(([name, s]) => ['default' in s ? `${name}=${s.default}` : name, s.about] as const);
  const width = Math.max(...entries.map(([left]) => left.length)) + 2;
  return entries.map(([left, about]) => `${indent}${left.padEnd(width)}${about}`).join('\n');
}
