import { loadConfig } from '../src/config';
import { ConfigError } from '../src/config/checks';

describe('cluster settings (NODE_ID, EVENT_BUS, REDIS_URL, REDIS_STREAM_MAXLEN)', () => {
  it('defaults to one process: no node name, the in-memory bus', () => {
    expect(loadConfig({})).toMatchObject({ nodeId: null, eventBus: 'memory', redisUrl: null, redisStreamMaxLen: 100000 });
  });

  it('reads the accepted values', () => {
    expect(
      loadConfig({ NODE_ID: 'p-2_b', EVENT_BUS: 'redis', REDIS_URL: 'redis://127.0.0.1:6380', REDIS_STREAM_MAXLEN: '500' }),
    ).toMatchObject({ nodeId: 'p-2_b', eventBus: 'redis', redisUrl: 'redis://127.0.0.1:6380', redisStreamMaxLen: 500 });
  });

  it.each([
    [{ NODE_ID: 'p:1' }, 'NODE_ID must be 1 to 32 letters, digits, - or _ (starting with a letter or digit), got "p:1"'],
    [{ NODE_ID: '-p' }, 'NODE_ID must be 1 to 32 letters, digits, - or _ (starting with a letter or digit), got "-p"'],
    [
      { NODE_ID: 'x'.repeat(33) },
      `NODE_ID must be 1 to 32 letters, digits, - or _ (starting with a letter or digit), got "${'x'.repeat(33)}"`,
    ],
    [{ EVENT_BUS: 'kafka' }, 'EVENT_BUS must be one of memory, redis, got "kafka"'],
    [{ EVENT_BUS: 'redis' }, 'REDIS_URL must be set when EVENT_BUS=redis, got ""'],
    [{ REDIS_URL: 'http://cache:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL (redis://host:port), got "http://cache:6379"'],
    [{ REDIS_URL: 'redis://u:s3cret@' }, 'REDIS_URL must be a redis:// or rediss:// URL (redis://host:port), got "redis://u:***@"'],
    [{ REDIS_STREAM_MAXLEN: '0' }, 'REDIS_STREAM_MAXLEN must be a positive integer, got "0"'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${message}`);
  });
});
