import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { ConfigError } from '../src/config/checks';

const ROOT = path.join(__dirname, '..');

describe('RATE_LIMIT_STORE', () => {
  it('defaults to memory and reads each store', () => {
    expect(loadConfig({}).rateLimitStore).toBe('memory');
    expect(loadConfig({ RATE_LIMIT_STORE: 'database' }).rateLimitStore).toBe('database');
    expect(loadConfig({ RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6391' })).toMatchObject({
      rateLimitStore: 'redis',
      redisUrl: 'redis://127.0.0.1:6391',
      // The rate limits may use Redis while events stay in the process.
      eventBus: 'memory',
    });
  });

  it.each([
    [{ RATE_LIMIT_STORE: 'redis' }, 'REDIS_URL must be set when RATE_LIMIT_STORE=redis, got ""'],
    [{ RATE_LIMIT_STORE: 'redis', REDIS_URL: '  ' }, 'REDIS_URL must be set when RATE_LIMIT_STORE=redis, got ""'],
    [
      { RATE_LIMIT_STORE: 'redis', REDIS_URL: 'http://cache:6379' },
      'REDIS_URL must be a redis:// or rediss:// URL (redis://host:port), got "http://cache:6379"',
    ],
    [{ RATE_LIMIT_STORE: 'memcached' }, 'RATE_LIMIT_STORE must be one of memory, database, redis, got "memcached"'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${message}`);
  });

  it('a server started with RATE_LIMIT_STORE=redis and no REDIS_URL says so and exits 1', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-config-rl-'));
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        RATE_LIMIT_STORE: 'redis',
      };
      delete env.REDIS_URL;
      const res = spawnSync(
        process.execPath,
        ['-r', path.join(ROOT, 'test', 'support', 'register-ts.js'), path.join(ROOT, 'src', 'main.ts')],
        {
          cwd: ROOT,
          env,
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect({ code: res.status, stdout: res.stdout, stderr: res.stderr }).toEqual({
        code: 1,
        stdout: '',
        stderr: 'Invalid configuration: REDIS_URL must be set when RATE_LIMIT_STORE=redis, got ""\n',
      });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('TRUSTED_PROXIES', () => {
  it('trusts no proxy by default and reads addresses, ranges and names', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: ' 127.0.0.1, 10.0.0.0/8 ,::1,fd00::/8,loopback' }).trustedProxies).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
  });

  it.each(['haproxy.local', '10.0.0.0/33', '::1/129', '10.0.0.1/8/8', '300.1.1.1'])('refuses %s', (value) => {
    expect(() => loadConfig({ TRUSTED_PROXIES: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUSTED_PROXIES: value })).toThrow(/TRUSTED_PROXIES must list addresses or CIDR ranges/);
  });
});
