import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, SETTINGS } from '../src/config';
import { ConfigError } from '../src/config/checks';
import { runServerToExit } from './support/server-process';

/** Each refused value and the one line the operator reads. */
const REFUSED: Array<[Record<string, string>, string]> = [
  [{ PORT: 'abc' }, 'PORT must be an integer 0..65535, got "abc"'],
  [{ PORT: '65536' }, 'PORT must be an integer 0..65535, got "65536"'],
  [{ PORT: '-1' }, 'PORT must be an integer 0..65535, got "-1"'],
  [{ PORT: '80.5' }, 'PORT must be an integer 0..65535, got "80.5"'],
  [{ HOST: 'not a host' }, 'HOST must be an IP address or a host name, got "not a host"'],
  [{ DATA_DIR: __filename }, `DATA_DIR must be a directory (or a path where one can be made), got ${JSON.stringify(__filename)}`],
  [
    { DATABASE_URL: 'postgres://app:s3cret@db/parley' },
    'DATABASE_URL must be a mysql:// or mariadb:// URL naming a database (mysql://user:password@host:port/database), got "postgres://app:***@db/parley"',
  ],
  [
    { DATABASE_URL: 'mysql://app:s3cret@db:3306/' },
    'DATABASE_URL must be a mysql:// or mariadb:// URL naming a database (mysql://user:password@host:port/database), got "mysql://app:***@db:3306/"',
  ],
  [
    { DATABASE_URL: 'app:s3cret@db/parley' },
    'DATABASE_URL must be a mysql:// or mariadb:// URL naming a database (mysql://user:password@host:port/database), got "app:***@db/parley"',
  ],
  [{ EXTERNAL_URL: 'chat.example.com' }, 'EXTERNAL_URL must be an absolute http:// or https:// URL, got "chat.example.com"'],
  [{ EXTERNAL_URL: 'ftp://chat.example.com' }, 'EXTERNAL_URL must be an absolute http:// or https:// URL, got "ftp://chat.example.com"'],
  [{ PUSH_RELAY_URL: 'relay.example.com' }, 'PUSH_RELAY_URL must be an absolute http:// or https:// URL, got "relay.example.com"'],
  [{ MAX_FILE_UPLOAD_SIZE_MIB: '0' }, 'MAX_FILE_UPLOAD_SIZE_MIB must be a positive integer, got "0"'],
  [{ MAX_FILE_UPLOAD_SIZE_MIB: '10MB' }, 'MAX_FILE_UPLOAD_SIZE_MIB must be a positive integer, got "10MB"'],
  [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'],
  [{ VALIDATE_RESPONSES: 'yes' }, 'VALIDATE_RESPONSES must be true, false, 1 or 0, got "yes"'],
  [{ WEB_PUBLIC_STREAMS_ENABLED: 'off' }, 'WEB_PUBLIC_STREAMS_ENABLED must be true, false, 1 or 0, got "off"'],
  [{ UNCLAIMED_UPLOADS_GRACE_DAYS: '1.5' }, 'UNCLAIMED_UPLOADS_GRACE_DAYS must be a positive integer, got "1.5"'],
  [{ UPLOAD_SWEEP_INTERVAL_MS: '0' }, 'UPLOAD_SWEEP_INTERVAL_MS must be a positive integer, got "0"'],
  [{ UPLOAD_SWEEP_BATCH_SIZE: 'many' }, 'UPLOAD_SWEEP_BATCH_SIZE must be a positive integer, got "many"'],
  [{ DELETE_TOPIC_BATCH_SIZE: '-5' }, 'DELETE_TOPIC_BATCH_SIZE must be a positive integer, got "-5"'],
  [{ DELETE_TOPIC_TIME_BUDGET_MS: '1e3' }, 'DELETE_TOPIC_TIME_BUDGET_MS must be a positive integer, got "1e3"'],
  [{ PUSH_RELAY_BACKOFF_MS: '0x10' }, 'PUSH_RELAY_BACKOFF_MS must be a positive integer, got "0x10"'],
  [{ PUSH_RELAY_MAX_ATTEMPTS: '0' }, 'PUSH_RELAY_MAX_ATTEMPTS must be a positive integer, got "0"'],
  [{ DB_POOL_MAX: '99999999999999999999' }, 'DB_POOL_MAX must be a positive integer, got "99999999999999999999"'],
  [{ METRICS_PORT: '70000' }, 'METRICS_PORT must be an integer 0..65535, got "70000"'],
  [{ METRICS_HOST: 'bad_host!' }, 'METRICS_HOST must be an IP address or a host name, got "bad_host!"'],
  [{ SHUTDOWN_TIMEOUT_MS: 'ten' }, 'SHUTDOWN_TIMEOUT_MS must be a positive integer, got "ten"'],
  [
    { OUTGOING_WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/33' },
    'OUTGOING_WEBHOOK_ALLOWED_HOSTS must list host names, addresses or CIDR ranges, comma separated, got "10.0.0.0/33"',
  ],
  [
    { OUTGOING_WEBHOOK_ALLOWED_HOSTS: 'bots.internal, http://x/' },
    'OUTGOING_WEBHOOK_ALLOWED_HOSTS must list host names, addresses or CIDR ranges, comma separated, got "bots.internal, http://x/"',
  ],
  [{ OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '0' }, 'OUTGOING_WEBHOOK_TIMEOUT_SECONDS must be a positive integer, got "0"'],
];

describe('configuration', () => {
  it.each(REFUSED)('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${message}`);
  });

  it('has a default for every setting, and takes an empty value as unset', () => {
    const defaults = loadConfig({});
    expect(defaults).toMatchObject({
      host: '127.0.0.1',
      port: 9991,
      dataDir: path.resolve('./data'),
      databaseUrl: null,
      externalUrl: 'http://127.0.0.1:9991',
      logLevel: 'info',
      validateResponses: false,
      maxFileUploadSizeMib: 100,
      webPublicStreamsEnabled: true,
      pushRelayUrl: null,
      dbPoolMax: 10,
      metricsPort: null,
      metricsHost: '127.0.0.1',
      shutdownTimeoutMs: 10000,
      outgoingWebhookAllowedHosts: [],
      outgoingWebhookTimeoutSeconds: 10,
    });
    expect(loadConfig({ PORT: '', METRICS_PORT: ' ', VALIDATE_RESPONSES: '', DATABASE_URL: '' })).toEqual(defaults);
  });

  it('reads the accepted spellings', () => {
    for (const [raw, value] of [
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
      ['TRUE', true],
    ] as const) {
      expect(loadConfig({ VALIDATE_RESPONSES: raw }).validateResponses).toBe(value);
      expect(loadConfig({ WEB_PUBLIC_STREAMS_ENABLED: raw }).webPublicStreamsEnabled).toBe(value);
    }
    const c = loadConfig({
      PORT: '0',
      HOST: '::1',
      DATABASE_URL: 'mariadb://u:p@db.internal:3307/parley',
      EXTERNAL_URL: 'https://chat.example.com/',
      LOG_LEVEL: 'debug',
      METRICS_PORT: '9102',
      METRICS_HOST: '0.0.0.0',
      SHUTDOWN_TIMEOUT_MS: '2500',
      OUTGOING_WEBHOOK_ALLOWED_HOSTS: ' bots.internal, 10.20.0.0/16,fd00::/8 , 127.0.0.1',
      OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '30',
    });
    expect(c).toMatchObject({
      port: 0,
      host: '::1',
      databaseUrl: 'mariadb://u:p@db.internal:3307/parley',
      externalUrl: 'https://chat.example.com',
      logLevel: 'debug',
      metricsPort: 9102,
      metricsHost: '0.0.0.0',
      shutdownTimeoutMs: 2500,
      outgoingWebhookAllowedHosts: ['bots.internal', '10.20.0.0/16', 'fd00::/8', '127.0.0.1'],
      outgoingWebhookTimeoutSeconds: 30,
    });
  });

  /** The server as `make run` starts it, from source, with these settings: a start that must fail. */
  async function startWith(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-config-'));
    try {
      return await runServerToExit({ DATA_DIR: dataDir, ...env });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('a server started with a bad setting prints one line naming it and exits 1', async () => {
    const res = await startWith({ PORT: 'abc' });
    expect(res).toEqual({ code: 1, stdout: '', stderr: 'Invalid configuration: PORT must be an integer 0..65535, got "abc"\n' });
  });

  it('never prints the database password it refuses', async () => {
    const res = await startWith({ DATABASE_URL: 'postgresql://app:s3cret@db/parley' });
    expect(res.code).toBe(1);
    expect(res.stderr.split('\n')).toEqual([
      'Invalid configuration: DATABASE_URL must be a mysql:// or mariadb:// URL naming a database (mysql://user:password@host:port/database), got "postgresql://app:***@db/parley"',
      '',
    ]);
    expect(res.stderr).not.toContain('s3cret');
  });
});

describe('the list of settings (src/config/settings.ts), which --help prints', () => {
  /** The names loadConfig reads from an environment, whatever way it reads them. */
  function namesRead(env: Record<string, string>): Set<string> {
    const read = new Set<string>();
    const recording = new Proxy(env, {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return target[name as string];
      },
    });
    loadConfig(recording);
    return read;
  }

  it('holds every setting loadConfig reads, and none it does not', () => {
    // The defaults, then the branches that read more (Redis for the event bus and the rate limits, metrics).
    const read = new Set([
      ...namesRead({}),
      ...namesRead({ EVENT_BUS: 'redis', RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379', METRICS_PORT: '9102' }),
    ]);
    expect([...read].sort()).toEqual(Object.keys(SETTINGS).sort());
  });

  it('gives each default as loadConfig takes it: set to its listed default, a setting changes nothing', () => {
    const unset = loadConfig({});
    for (const [name, s] of Object.entries(SETTINGS)) {
      if ('default' in s) expect([name, loadConfig({ [name]: s.default })]).toEqual([name, unset]);
    }
  });
});
