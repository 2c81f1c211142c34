import http from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AppContext } from './context';
import { poolStats } from './db/health';
import { EMAIL_STATE_NAMES, type EmailStateValue } from './domain/outgoing-emails';
import { countEmailsByState } from './queries/outgoing-emails';

/**
 * Prometheus metrics of this process (prom-client), served only on their own
 * listener (METRICS_PORT): never on the API's port, where anyone could read
 * them. Labels are bounded: an operation id of the contract or one of a few
 * fixed names, never a path a client chose.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'operation' | 'status'>;
  private readonly duration: Histogram<'operation'>;

  constructor(ctx: AppContext) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'parley_http_requests_total',
      help: 'HTTP requests answered, by operation id of the contract and status code.',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'parley_http_request_duration_seconds',
      help: 'Time from the request arriving to the response ending, by operation id (GET /events includes its long-poll wait).',
      labelNames: ['operation'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    new Gauge({
      name: 'parley_event_queues',
      help: 'Event queues open in this process.',
      registers,
      collect() {
        this.set(ctx.queues.stats.queues);
      },
    });
    new Gauge({
      name: 'parley_event_queue_events',
      help: 'Events held by the event queues, not yet acknowledged.',
      registers,
      collect() {
        this.set(ctx.queues.stats.events);
      },
    });
    new Gauge({
      name: 'parley_event_polls_waiting',
      help: 'Long-polls (GET /events) waiting for an event.',
      registers,
      collect() {
        this.set(ctx.queues.waitingPolls());
      },
    });
    new Gauge({
      name: 'parley_push_relay_backlog',
      help: 'Push notification jobs queued, in flight or waiting for a retry (0 without a relay).',
      registers,
      collect() {
        this.set(ctx.push?.backlog ?? 0);
      },
    });
    new Gauge({
      name: 'parley_outgoing_webhook_backlog',
      help: 'Outgoing webhook calls queued or in flight, retries included.',
      registers,
      collect() {
        this.set(ctx.outgoingWebhooks.jobs.backlog);
      },
    });
    new Gauge({
      name: 'parley_outgoing_emails',
      help: 'Mails in the queue (the database, so the same on every node), by state: pending, sending, sent, failed.',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await countEmailsByState(ctx.db);
        for (const [code, name] of Object.entries(EMAIL_STATE_NAMES)) {
          this.set({ state: name }, counts.get(Number(code) as EmailStateValue) ?? 0);
        }
      },
    });
    new Gauge({
      name: 'parley_db_pool_connections',
      help: 'Database pool: connections in use, idle, and requests waiting for one.',
      labelNames: ['state'],
      registers,
      collect() {
        const s = poolStats(ctx.db);
        this.set({ state: 'used' }, s.used);
        this.set({ state: 'free' }, s.free);
        this.set({ state: 'pending' }, s.pending);
      },
    });
    new Gauge({
      name: 'parley_cache_entries',
      help: 'Entries held by each per-process cache (src/cache/).',
      labelNames: ['cache'],
      registers,
      collect() {
        for (const c of ctx.caches.stats()) this.set({ cache: c.name }, c.size);
      },
    });
    // Counters read from the caches' own tallies when scraped (reset, then the total).
    new Counter({
      name: 'parley_cache_hits_total',
      help: 'Lookups each per-process cache answered from memory.',
      labelNames: ['cache'],
      registers,
      collect() {
        this.reset();
        for (const c of ctx.caches.stats()) this.inc({ cache: c.name }, c.hits);
      },
    });
    new Counter({
      name: 'parley_cache_misses_total',
      help: 'Lookups each per-process cache had to read from the database.',
      labelNames: ['cache'],
      registers,
      collect() {
        this.reset();
        for (const c of ctx.caches.stats()) this.inc({ cache: c.name }, c.misses);
      },
    });
    new Counter({
      name: 'parley_retention_archived_messages_total',
      help: 'Messages this process moved to the archive under a retention policy.',
      registers,
      collect() {
        this.reset();
        this.inc(ctx.retention.archived);
      },
    });
    new Counter({
      name: 'parley_retention_vacuumed_messages_total',
      help: 'Archived messages this process deleted for good, past ARCHIVED_DATA_VACUUM_DAYS.',
      registers,
      collect() {
        this.reset();
        this.inc(ctx.retention.vacuumed);
      },
    });
    new Counter({
      name: 'parley_retention_runs_total',
      help: 'Runs of the retention archiver in this process, by outcome: done, lease_held (another process was archiving), failed.',
      labelNames: ['outcome'],
      registers,
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(ctx.retention.runs)) this.inc({ outcome }, n);
      },
    });
    new Gauge({
      name: 'parley_redis_up',
      help: 'Whether each Redis connection of this process is up (1) or not (0): the event bus (EVENT_BUS=redis), the rate limits (RATE_LIMIT_STORE=redis). No series for what does not use Redis.',
      labelNames: ['connection'],
      registers,
      collect() {
        if (ctx.bus.connected) this.set({ connection: 'event_bus' }, ctx.bus.connected() ? 1 : 0);
        if (ctx.rateLimits.redis) this.set({ connection: 'rate_limits' }, ctx.rateLimits.redis.status === 'ready' ? 1 : 0);
      },
    });
    new Counter({
      name: 'parley_event_bus_entries_read_total',
      help: 'Entries this node read from the Redis event stream (deliveries, invalidations, markers); 0 without it.',
      registers,
      collect() {
        this.reset();
        this.inc(ctx.bus.stats?.read ?? 0);
      },
    });
    new Counter({
      name: 'parley_event_bus_resets_total',
      help: 'Times this node dropped its event queues because entries of the Redis event stream were lost (it fell behind, or Redis lost them).',
      registers,
      collect() {
        this.reset();
        this.inc(ctx.bus.stats?.resets ?? 0);
      },
    });
  }

  /** Express middleware: counts and times every response, labelled once it is known which operation it was. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const started = process.hrtime.bigint();
      res.once('close', () => {
        const operation = operationOf(req, res);
        this.requests.inc({ operation, status: String(res.statusCode) });
        this.duration.observe({ operation }, Number(process.hrtime.bigint() - started) / 1e9);
      });
      next();
    };
  }

  /** The metrics listener: GET /metrics in Prometheus' text format, 404 for anything else. */
  listen(host: string, port: number): Promise<http.Server> {
    const server = http.createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
        () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n'),
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  }
}

/** The operation id the pipeline matched, else a fixed name for the routes outside the contract. */
function operationOf(req: Request, res: Response): string {
  const op: unknown = res.locals.operationId;
  if (typeof op === 'string') return op;
  const path = req.originalUrl.split('?')[0] ?? '';
  if (path.startsWith('/api/v1/tus')) return 'tus';
  if (path.startsWith('/user_uploads/')) return 'get-file';
  if (path.startsWith('/user_avatars/')) return 'get-avatar-file';
  return 'unmatched';
}
