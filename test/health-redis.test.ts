import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { Redis } from 'ioredis';
import pino from 'pino';
import { buildApp } from '../src/app';
import { RedisBus } from '../src/events/redis-bus';
import { createHttpServer } from '../src/http/transport';
import { Metrics } from '../src/metrics';
import { RequestTracker, shutDown } from '../src/shutdown';
import { until } from './support/clock';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { redisAvailable, TestRedis } from './support/redis';
import { ApiClient, startTestServer, type TestServer } from './support/server';

const haveRedis = redisAvailable();

/** One sample of Prometheus' text format, or undefined when the series is absent. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

/**
 * A server that uses Redis for both its event bus and its rate limits: /health
 * and the metrics say whether each connection reaches Redis (Redis down is
 * not a 503), and the graceful stop closes both connections.
 */
eachDatabase('Redis in /health, metrics and shutdown', (dialect) => {
  if (!haveRedis) {
    it.skip('needs redis-server', () => undefined);
    return;
  }
  let redis: TestRedis;
  let admin: Redis;
  let bus: RedisBus;
  let t: TestServer;
  let api: ApiClient;
  let metrics: Metrics;
  const nodeId = `health-${dialect}`;

  beforeAll(async () => {
    redis = await TestRedis.start();
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    bus = new RedisBus({ url: redis.url, nodeId, key: `test:health:${dialect}`, maxLen: 1000, blockMs: 200 });
    t = await startTestServer(dialect, undefined, {
      bus,
      config: { nodeId, rateLimits: true, rateLimitStore: 'redis', redisUrl: redis.url },
    });
    await bus.start();
    metrics = new Metrics(t.ctx);
    api = new ApiClient(buildApp({ ctx: t.ctx, spec: t.spec, metrics }), new ContractChecker(t.spec));
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await bus.close();
    await t.ctx.rateLimits.close();
    admin.disconnect();
    await t.close();
    await redis.destroy();
  });

  /** This node's connections as Redis lists them (their names: src/events/redis-bus-config.ts, src/actions/rate-limits.ts). */
  async function connectionNames(): Promise<string[]> {
    const list = (await admin.call('CLIENT', 'LIST')) as string;
    return list
      .split('\n')
      .map((l) => /(?:^| )name=(\S*)/.exec(l)?.[1] ?? '')
      .filter((n) => n.startsWith(`parley-${nodeId}-`))
      .sort();
  }

  it('reports each Redis connection up, in /health and as parley_redis_up', async () => {
    await until(() => t.ctx.rateLimits.redis?.status === 'ready', 'the rate limits connect');
    const health = await api.get('/health', null);
    expect(health.status).toBe(200);
    expect(health.body.checks.redis).toEqual({ status: 'ok', used_by: ['event_bus', 'rate_limits'] });
    const text = await metrics.registry.metrics();
    expect(sample(text, 'parley_redis_up', 'connection="event_bus"')).toBe(1);
    expect(sample(text, 'parley_redis_up', 'connection="rate_limits"')).toBe(1);
    expect(await connectionNames()).toEqual([`parley-${nodeId}-r`, `parley-${nodeId}-rl`, `parley-${nodeId}-w`]);
  });

  it('with Redis stopped: still 200 (the database answers), the Redis check failed for both, the gauges 0; back once Redis is', async () => {
    admin.disconnect();
    await redis.stop();
    await until(() => t.ctx.rateLimits.redis?.status !== 'ready' && !bus.connected(), 'both connections notice');
    const down = await api.get('/health', null);
    expect(down.status).toBe(200);
    expect(down.body.status).toBe('ok');
    expect(down.body.checks.database).toEqual({ status: 'ok' });
    expect(down.body.checks.redis).toEqual({
      status: 'failed',
      used_by: ['event_bus', 'rate_limits'],
      error: expect.stringMatching(/^event bus: not connected \(\w+\); rate limits: not connected \(\w+\)$/),
    });
    // The API itself is still served, its rate limit counted in this process meanwhile.
    const me = await api.get('/users/me', t.cast.member);
    expect(me.status).toBe(200);
    expect(me.headers['x-ratelimit-remaining']).toBe('199');
    const text = await metrics.registry.metrics();
    expect(sample(text, 'parley_redis_up', 'connection="event_bus"')).toBe(0);
    expect(sample(text, 'parley_redis_up', 'connection="rate_limits"')).toBe(0);

    await redis.start();
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    await until(() => t.ctx.rateLimits.redis?.status === 'ready' && bus.connected(), 'both reconnect', 10_000);
    expect((await api.get('/health', null)).body.checks.redis).toEqual({ status: 'ok', used_by: ['event_bus', 'rate_limits'] });
  });

  it('the graceful stop closes both Redis connections', async () => {
    const server: http.Server = createHttpServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    expect((server.address() as AddressInfo).port).toBeGreaterThan(0);
    expect(await connectionNames()).toHaveLength(3);
    await shutDown({
      ctx: t.ctx,
      log: pino({ level: 'silent' }),
      server,
      tracker: new RequestTracker(server),
      metricsServer: null,
      stopTimers: () => undefined,
      timeoutMs: 1000,
    });
    // Gone from Redis' own list while this process still runs: closed, not dropped by an exit.
    expect(await connectionNames()).toEqual([]);
    expect(t.ctx.rateLimits.redis?.status).toBe('end');
    expect(bus.connected()).toBe(false);
  });
});
