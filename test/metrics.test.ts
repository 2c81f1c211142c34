import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { buildApp } from '../src/app';
import { Metrics } from '../src/metrics';
import { until } from './support/clock';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { register } from './support/events';
import { newInstance, type Instance } from './support/instances';
import { ProcessClient, startServerProcess, type ServerProcess } from './support/server-process';
import { ApiClient, startTestServer, testSpec, type TestServer } from './support/server';

/** The value of one sample in Prometheus' text format; 0 when the series does not exist yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

async function scrape(url: string): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

eachDatabase('metrics (METRICS_PORT)', (dialect) => {
  let t: TestServer;
  let api: ApiClient;
  let app: ReturnType<typeof buildApp>;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const metrics = new Metrics(t.ctx);
    app = buildApp({ ctx: t.ctx, spec: t.spec, metrics });
    api = new ApiClient(app, new ContractChecker(t.spec));
    server = await metrics.listen('127.0.0.1', 0);
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });
  afterAll(async () => {
    server.close();
    t.ctx.queues.close();
    await t.close();
  });

  it('counts requests by operation id and status, and times them, on its own listener', async () => {
    const before = (await scrape(url)).text;
    for (let i = 0; i < 3; i++) expect((await api.get('/users/me', t.cast.member)).status).toBe(200);
    expect((await api.get('/users/me', null)).status).toBe(401);
    const after = await scrape(url);
    expect(after.status).toBe(200);
    expect(after.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const count = (text: string, status: string) => sample(text, 'parley_http_requests_total', { operation: 'get-own-user', status });
    expect(count(after.text, '200') - count(before, '200')).toBe(3);
    expect(count(after.text, '401') - count(before, '401')).toBe(1);
    const timed = (text: string) => sample(text, 'parley_http_request_duration_seconds_count', { operation: 'get-own-user' });
    expect(timed(after.text) - timed(before)).toBe(4);
    expect(sample(after.text, 'parley_http_request_duration_seconds_sum', { operation: 'get-own-user' })).toBeGreaterThan(0);
  });

  it('reports the event queues, the waiting long-polls, the database pool and the process', async () => {
    const client = await register(t, t.cast.member);
    const poll = request(app)
      .get('/api/v1/events')
      .auth(t.cast.member.email, t.cast.member.api_key)
      .query({ queue_id: client.queueId, last_event_id: String(client.lastEventId) })
      .then((r) => r);
    await until(() => t.ctx.queues.waitingPolls() === 1, 'the poll waits');
    const text = (await scrape(url)).text;
    expect(sample(text, 'parley_event_queues')).toBe(1);
    expect(sample(text, 'parley_event_polls_waiting')).toBe(1);
    expect(sample(text, 'parley_outgoing_webhook_backlog')).toBe(0);
    expect(text).toMatch(/^parley_db_pool_connections\{state="used"\} \d+$/m);
    expect(text).toMatch(/^parley_db_pool_connections\{state="free"\} \d+$/m);
    expect(text).toMatch(/^parley_db_pool_connections\{state="pending"\} 0$/m);
    expect(
      sample(text, 'parley_db_pool_connections', { state: 'used' }) + sample(text, 'parley_db_pool_connections', { state: 'free' }),
    ).toBeGreaterThan(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    t.ctx.queues.delete(t.cast.member.id, client.queueId); // ends the poll
    await poll;
    expect(sample((await scrape(url)).text, 'parley_event_queues')).toBe(0);
  });

  it('reports the entries, hits and misses of each cache', async () => {
    t.ctx.caches.apply({ kind: 'all' });
    const before = (await scrape(url)).text;
    for (let i = 0; i < 3; i++) expect((await api.get('/users/me', t.cast.admin)).status).toBe(200);
    const after = (await scrape(url)).text;
    const delta = (name: string) => sample(after, name, { cache: 'callers' }) - sample(before, name, { cache: 'callers' });
    // The first request reads the caller, the next two find it.
    expect(delta('parley_cache_misses_total')).toBe(1);
    expect(delta('parley_cache_hits_total')).toBe(2);
    expect(sample(after, 'parley_cache_entries', { cache: 'callers' })).toBe(1);
    expect(sample(after, 'parley_cache_entries', { cache: 'realms' })).toBe(1);
  });

  it('answers nothing but GET /metrics', async () => {
    const res = await scrape(url.replace('/metrics', '/api/v1/users/me'));
    expect(res.status).toBe(404);
  });
});

eachDatabase('metrics in the server process', (dialect) => {
  let instance: Instance;
  let withMetrics: ServerProcess | null = null;
  let without: ServerProcess | null = null;
  beforeAll(async () => {
    instance = await newInstance(dialect);
  });
  afterAll(async () => {
    await withMetrics?.kill();
    await without?.kill();
    await instance.drop();
  });

  it('with METRICS_PORT, serves them on that port only and counts the API’s requests', async () => {
    withMetrics = await startServerProcess({ ...instance.env, DATABASE_URL: instance.databaseUrl ?? '', METRICS_PORT: '0' });
    const metricsUrl = /^Metrics:\s+(http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(withMetrics.output())?.[1];
    expect(metricsUrl).toBeDefined();
    const client = new ProcessClient(withMetrics.url, new ContractChecker(await testSpec()));
    try {
      for (let i = 0; i < 2; i++) expect((await client.call('GET', '/users/me', withMetrics.owner)).status).toBe(200);
    } finally {
      client.close();
    }
    const text = (await scrape(metricsUrl!)).text;
    expect(sample(text, 'parley_http_requests_total', { operation: 'get-own-user', status: '200' })).toBe(2);
    expect((await scrape(`${withMetrics.url}/metrics`)).status).toBe(404);
    expect(await withMetrics.stop()).toBe(0);
    withMetrics = null;
  });

  it('without METRICS_PORT, nothing answers /metrics, on the API port or elsewhere', async () => {
    fs.rmSync(`${instance.dataDir}/zuliprc`, { force: true });
    without = await startServerProcess({ ...instance.env, DATABASE_URL: instance.databaseUrl ?? '', METRICS_PORT: '' });
    expect(without.output()).not.toMatch(/Metrics:/);
    const res = await scrape(`${without.url}/metrics`);
    expect(res.status).toBe(404);
    expect(res.text).not.toMatch(/parley_http_requests_total|process_cpu/);
    expect(await without.stop()).toBe(0);
    without = null;
  });
});
