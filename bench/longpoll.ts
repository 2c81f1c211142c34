/**
 * One-shot measurement of real-time delivery at scale, on one server
 * process (dist/src/main.js, started by this script):
 * 1. an organization of BENCH_LONGPOLL_USERS users (default 10,000), all
 *    subscribed to one public channel, loaded straight into a fresh database
 *    (SQLite in a temporary directory; BENCH_DB=mariadb with BENCH_MYSQL_URL
 *    for a scratch MariaDB database, dropped afterwards);
 * 2. every user registers a queue (event_types ["message"]) and long-polls
 *    GET /events over its own TCP connection, from BENCH_LONGPOLL_CLIENTS
 *    client processes (default 2) with keep-alive agents;
 * 3. one POST /messages to the channel: the time from the request until
 *    each client has its event (p50 / p99 / max), and the POST's own time;
 * 4. more queues through POST /register until BENCH_LONGPOLL_IDLE_QUEUES
 *    (default 100,000) exist, none polled.
 * The server's resident memory (VmRSS, /proc) and heap (its /metrics) are
 * read at each step, and the memory per queue derived from them.
 *
 *   npx tsc -p bench/tsconfig.json && node dist/bench/longpoll.js
 */
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/connection';
import { createScratchDatabase } from './lib/scratch-database';
import { loadScratchOrganization } from './lib/scratch-organization';
import { type BenchServer, startBenchServer } from './lib/server-process';
import { buildApp } from '../src/app';
import { createContext } from '../src/context';
import type { Clock } from '../src/events/clock';
import { queueOptionsFor } from '../src/events/options';
import type { EventQueue } from '../src/events/queue';
import { loadSpec } from '../src/http/spec';
import { createHttpServer } from '../src/http/transport';
import { listRealms } from '../src/queries/realms';
import { listRealmUsers } from '../src/queries/users';

const USERS = Number(process.env.BENCH_LONGPOLL_USERS ?? 10_000);
const IDLE_QUEUES = Number(process.env.BENCH_LONGPOLL_IDLE_QUEUES ?? 100_000);
/** Polls timed once the idle-queue server is warm (the first poll is timed apart). */
const WARM_POLLS = 21;
const CLIENTS = Number(process.env.BENCH_LONGPOLL_CLIENTS ?? 2);
/** Requests each client process keeps in flight while registering. */
const REGISTER_CONCURRENCY = 32;
/** Connections a client process opens at once (the server's accept backlog is 511). */
const CONNECT_CONCURRENCY = 100;

interface Credentials {
  email: string;
  key: string;
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------- client process

type ToClient =
  { cmd: 'init'; port: number; users: Credentials[] } | { cmd: 'register'; perUser: number } | { cmd: 'poll' } | { cmd: 'quit' };
type FromClient =
  | { done: 'init' }
  | { done: 'register'; queues: number }
  | { done: 'connected' }
  | { done: 'received'; times: number[]; failures: string[] };

function request(
  agent: http.Agent,
  port: number,
  who: Credentials,
  method: string,
  pathAndQuery: string,
  body?: string,
  onConnected?: () => void,
): Promise<{ status: number; text: string; at: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        agent,
        method,
        path: pathAndQuery,
        auth: `${who.email}:${who.key}`,
        headers:
          body === undefined ? {} : { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString(), at: now() }));
      },
    );
    req.on('error', reject);
    if (onConnected) {
      req.on('socket', (s) => {
        if (!s.connecting) onConnected();
        else s.once('connect', onConnected);
      });
    }
    req.end(body);
  });
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function clientMain(): void {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: Infinity });
  let port = 0;
  let users: Credentials[] = [];
  /** The first queue of each user: the one that long-polls. */
  const firstQueue = new Map<Credentials, string>();
  const send = (m: FromClient) => process.send!(m);

  const register = async (who: Credentials): Promise<string> => {
    const r = await request(agent, port, who, 'POST', '/api/v1/register', 'event_types=%5B%22message%22%5D');
    if (r.status !== 200) throw new Error(`register answered ${r.status}: ${r.text}`);
    return (JSON.parse(r.text) as { queue_id: string }).queue_id;
  };

  process.on('message', (m: ToClient) => {
    void (async () => {
      if (m.cmd === 'init') {
        port = m.port;
        users = m.users;
        send({ done: 'init' });
      } else if (m.cmd === 'register') {
        const jobs = users.flatMap((u) => Array.from({ length: m.perUser }, () => u));
        await pool(jobs, REGISTER_CONCURRENCY, async (u) => {
          const id = await register(u);
          if (!firstQueue.has(u)) firstQueue.set(u, id);
        });
        send({ done: 'register', queues: jobs.length });
      } else if (m.cmd === 'poll') {
        const times: number[] = [];
        const failures: string[] = [];
        let connected = 0;
        let finished = 0;
        let inFlight = 0;
        const waiters: Array<() => void> = [];
        const connectedOne = () => {
          inFlight--;
          waiters.shift()?.();
          if (++connected === users.length) send({ done: 'connected' });
        };
        const finishedOne = () => {
          if (++finished === users.length) send({ done: 'received', times, failures });
        };
        // As a Zulip client: a heartbeat (or a dropped connection) is followed by the next poll.
        const pollUntilMessage = async (u: Credentials, onConnected?: () => void) => {
          let last = -1;
          let counted = false;
          const once = () => {
            if (counted) return;
            counted = true;
            onConnected?.();
          };
          for (let attempt = 0; attempt < 20; attempt++) {
            const q = encodeURIComponent(firstQueue.get(u)!);
            try {
              const r = await request(agent, port, u, 'GET', `/api/v1/events?queue_id=${q}&last_event_id=${last}`, undefined, once);
              const body = JSON.parse(r.text) as { events?: Array<{ type: string; id: number }> };
              if (r.status !== 200) throw new Error(`${r.status} ${r.text.slice(0, 200)}`);
              if (body.events!.some((e) => e.type === 'message')) return times.push(r.at);
              if (body.events!.length) last = body.events!.at(-1)!.id;
            } catch (err) {
              if (attempt === 19) failures.push(String(err));
              else await new Promise((r) => setTimeout(r, 100));
            }
          }
          once();
        };
        for (const u of users) {
          // At most CONNECT_CONCURRENCY connections being opened at any time.
          while (inFlight >= CONNECT_CONCURRENCY) await new Promise<void>((r) => waiters.push(r));
          inFlight++;
          void pollUntilMessage(u, connectedOne).finally(finishedOne);
        }
      } else {
        agent.destroy();
        process.exit(0);
      }
    })().catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  });
}

// ---------------------------------------------------------------- idle-queue process

interface IdleResult {
  queues: number;
  before: { rss: number; heap: number };
  after: { rss: number; heap: number };
  /** The server's first request (cold: caches empty, the validator compiling its schemas). */
  pollMs: number;
  /** The median of later polls of queues of other users, one at a time. */
  warmPollMs: number;
  expired: number;
  sweepMs: number;
}

/** The server's clock, moved by hand to expire the queues. */
class BenchClock implements Clock {
  time = Date.now();
  now = () => this.time;
  schedule(fn: () => void, ms: number) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  }
}

/**
 * IDLE_QUEUES queues in a server of its own (this process: Parley's app on
 * 127.0.0.1, the same database), registered as POST /register does
 * (queueOptionsFor + the queue manager) but without the HTTP round trip:
 * through the API, on this loaded 2-core machine, 100,000 registrations
 * took longer than the rest of the benchmark. Memory is read after a full
 * garbage collection, so the growth is what the queues hold.
 */
async function idleMain(): Promise<void> {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const config = {
    ...loadConfig({}),
    dataDir: process.env.IDLE_DATA_DIR!,
    databaseUrl: process.env.IDLE_DATABASE_URL || null,
    host: '127.0.0.1',
  };
  const db = createDb(config);
  const clock = new BenchClock();
  const ctx = createContext(db, config, undefined, undefined, clock);
  const server = createHttpServer(buildApp({ ctx, spec: await loadSpec() }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const users = await listRealmUsers(db, (await listRealms(db))[0]!.id);
  const memory = () => {
    gc();
    return { rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed };
  };
  const before = memory();
  const queues: EventQueue[] = [];
  for (let i = 0; i < IDLE_QUEUES; i++) {
    const user = users[i % users.length]!;
    queues.push(
      ctx.queues.register(
        queueOptionsFor(user, {
          event_types: ['message'],
          apply_markdown: false,
          client_gravatar: true,
          include_subscribers: false,
          slim_presence: false,
          all_public_streams: false,
        }),
      ),
    );
  }
  const after = memory();
  const agent = new http.Agent({ keepAlive: true });
  /** One dont_block poll of `queue` by its owner, timed (ms). */
  const timedPoll = async (queue: EventQueue): Promise<number> => {
    const user = users.find((u) => u.id === queue.opts.userId)!;
    const t = now();
    const r = await request(
      agent,
      port,
      { email: user.email, key: user.api_key },
      'GET',
      `/api/v1/events?queue_id=${queue.id}&last_event_id=-1&dont_block=true`,
    );
    if (r.status !== 200) throw new Error(`GET /events answered ${r.status}: ${r.text}`);
    return now() - t;
  };
  const pollMs = await timedPoll(queues[queues.length >> 1]!);
  // What a poll costs among that many queues, once the server is warm.
  const warm: number[] = [];
  for (let i = 1; i <= WARM_POLLS; i++) warm.push(await timedPoll(queues[Math.floor((i * queues.length) / (WARM_POLLS + 1))]!));
  const warmPollMs = warm.sort((a, b) => a - b)[warm.length >> 1]!;
  clock.time += ctx.queues.limits.idleTimeoutMs;
  const t1 = now();
  const expired = ctx.queues.collectGarbage();
  const sweepMs = now() - t1;
  agent.destroy();
  process.send!({ queues: queues.length, before, after, pollMs, warmPollMs, expired, sweepMs } satisfies IdleResult);
  await new Promise((resolve) => server.close(resolve));
  ctx.queues.close();
  await db.destroy();
  process.exit(0);
}

// ---------------------------------------------------------------- coordinator

/** The organization: an owner and USERS - 1 members, all in one public channel. */
async function loadOrganization(dataDir: string, databaseUrl: string): Promise<{ users: Credentials[]; channelId: number }> {
  const org = { name: 'Long-poll bench', users: USERS, prefix: 'user', fullName: 'User', channels: ['everyone'] };
  const { users, channelIds } = await loadScratchOrganization(dataDir, databaseUrl, org);
  return { users: users.map((u) => ({ email: u.email, key: u.api_key })), channelId: channelIds[0]! };
}

type Server = BenchServer;

function startServer(dataDir: string, databaseUrl: string): Promise<Server> {
  // BENCH_CPU_PROF=1: the server writes a .cpuprofile into bench/.data/prof/ (node dist/bench/profile.js <file>).
  const prof =
    process.env.BENCH_CPU_PROF === '1'
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(__dirname, '..', '..', 'bench', '.data', 'prof')}`]
      : [];
  return startBenchServer({ dataDir, databaseUrl, env: { LOG_LEVEL: 'silent' }, nodeArgs: prof, stderr: 'inherit' });
}

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

function get(port: number, p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      })
      .on('error', reject);
  });
}

async function serverMemory(s: Server): Promise<{ rss: number; heap: number; queues: number; waiting: number }> {
  const metrics = await get(s.metricsPort, '/metrics');
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  return {
    rss: rssOf(s.child.pid!),
    heap: value('nodejs_heap_size_used_bytes'),
    queues: value('parley_event_queues'),
    waiting: value('parley_event_polls_waiting'),
  };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-longpoll-'));
  let databaseUrl = '';
  let drop = async () => undefined as void;
  if (process.env.BENCH_DB === 'mariadb') {
    const raw = process.env.BENCH_MYSQL_URL?.trim();
    if (!raw) throw new Error('BENCH_DB=mariadb needs BENCH_MYSQL_URL (a server URL; a scratch database is made on it)');
    const scratch = await createScratchDatabase(raw, 'parley_bench_longpoll');
    databaseUrl = scratch.url;
    drop = scratch.drop;
  }
  const workers: ChildProcess[] = [];
  let server: Server | null = null;
  try {
    let t = Date.now();
    const { users } = await loadOrganization(dataDir, databaseUrl);
    console.error(`organization of ${USERS} users loaded in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    server = await startServer(dataDir, databaseUrl);
    const s = server;

    // Each client process takes a contiguous share of the users; user 0 (the sender) polls too.
    for (let i = 0; i < CLIENTS; i++) workers.push(fork(__filename, ['client'], { stdio: 'inherit' }));
    const ask = async (w: ChildProcess, m: ToClient, done: FromClient['done']): Promise<FromClient> =>
      new Promise((resolve) => {
        const on = (r: FromClient) => {
          if (r.done !== done) return;
          w.off('message', on);
          resolve(r);
        };
        w.on('message', on);
        w.send(m);
      });
    const share = Math.ceil(USERS / CLIENTS);
    await Promise.all(workers.map((w, i) => ask(w, { cmd: 'init', port: s.port, users: users.slice(i * share, (i + 1) * share) }, 'init')));

    const atStart = await serverMemory(s);
    t = Date.now();
    await Promise.all(workers.map((w) => ask(w, { cmd: 'register', perUser: 1 }, 'register')));
    const registerSeconds = (Date.now() - t) / 1000;
    const registered = await serverMemory(s);

    // Every user long-polls; wait until the server counts them all as waiting.
    const received = workers.map(
      (w) =>
        new Promise<Extract<FromClient, { done: 'received' }>>((resolve) =>
          w.on('message', (r: FromClient) => r.done === 'received' && resolve(r)),
        ),
    );
    for (const w of workers) w.send({ cmd: 'poll' } satisfies ToClient);
    // Until every poll waits (at most 5 minutes: a few connections may still be retrying then).
    let polling = await serverMemory(s);
    for (let i = 0; polling.waiting < USERS && i < 3000; i++) {
      await new Promise((r) => setTimeout(r, 100));
      polling = await serverMemory(s);
    }
    if (polling.waiting < USERS) console.error(`only ${polling.waiting} of ${USERS} polls wait as the message is sent`);

    const agent = new http.Agent({ keepAlive: false });
    const waitingAtSend = polling.waiting;
    const t0 = now();
    const sent = await request(
      agent,
      s.port,
      users[0]!,
      'POST',
      '/api/v1/messages',
      'type=stream&to=everyone&topic=fan-out&content=' + encodeURIComponent('Hello, everyone.'),
    );
    const postMs = sent.at - t0;
    if (sent.status !== 200) throw new Error(`POST /messages answered ${sent.status}: ${sent.text}`);
    const results = await Promise.all(received);
    const afterFanOut = await serverMemory(s);
    const failures = results.flatMap((r) => r.failures);
    const latencies = results.flatMap((r) => r.times.map((at) => at - t0)).sort((a, b) => a - b);

    const exited = new Promise((r) => s.child.once('exit', r));
    s.child.kill('SIGTERM');
    await exited;
    server = null;

    const idle = await new Promise<IdleResult>((resolve, reject) => {
      const child = fork(__filename, ['idle'], {
        stdio: 'inherit',
        env: { ...process.env, IDLE_DATA_DIR: dataDir, IDLE_DATABASE_URL: databaseUrl },
      });
      child.once('message', (r: IdleResult) => resolve(r));
      child.once('exit', (code) => reject(new Error(`the idle-queue process exited (${code})`)));
    });

    const load = os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ');
    console.log(
      `${USERS} long-polling users (${CLIENTS} client processes), ${databaseUrl ? 'MariaDB' : 'SQLite'}, ${os.cpus().length} cores, load average ${load}\n`,
    );
    console.log('| measure | value |');
    console.log('|---|---|');
    console.log(`| register ${USERS} queues | ${registerSeconds.toFixed(1)} s (${(USERS / registerSeconds).toFixed(0)}/s) |`);
    console.log(`| POST /messages to the ${USERS}-subscriber channel | ${postMs.toFixed(0)} ms |`);
    console.log(
      `| fan-out: events received (polls waiting at the send) | ${latencies.length} of ${USERS} (${waitingAtSend})${failures.length ? ` (${failures.length} failed: ${failures[0]})` : ''} |`,
    );
    if (latencies.length) {
      console.log(
        `| fan-out: send → event p50 / p99 / max | ${percentile(latencies, 50).toFixed(0)} / ${percentile(latencies, 99).toFixed(0)} / ${latencies.at(-1)!.toFixed(0)} ms |`,
      );
    }
    console.log(`| server RSS / heap at start | ${mb(atStart.rss)} / ${mb(atStart.heap)} MB |`);
    console.log(`| … with ${registered.queues} queues registered | ${mb(registered.rss)} / ${mb(registered.heap)} MB |`);
    console.log(`| … with ${polling.waiting} polls waiting | ${mb(polling.rss)} / ${mb(polling.heap)} MB |`);
    console.log(`| … after the fan-out | ${mb(afterFanOut.rss)} / ${mb(afterFanOut.heap)} MB |`);
    console.log(
      `| server with ${idle.queues} idle queues: RSS / heap before → after | ${mb(idle.before.rss)} / ${mb(idle.before.heap)} → ${mb(idle.after.rss)} / ${mb(idle.after.heap)} MB |`,
    );
    console.log(
      `| per idle queue (RSS / heap growth ÷ queues) | ${((idle.after.rss - idle.before.rss) / idle.queues).toFixed(0)} / ${((idle.after.heap - idle.before.heap) / idle.queues).toFixed(0)} bytes |`,
    );
    console.log(`| the server's first poll among ${idle.queues} queues (dont_block; cold) | ${idle.pollMs.toFixed(1)} ms |`);
    console.log(`| a later poll among them (median of ${WARM_POLLS}, other users' queues) | ${idle.warmPollMs.toFixed(2)} ms |`);
    console.log(`| expiry sweep dropping ${idle.expired} idle queues | ${idle.sweepMs.toFixed(0)} ms |`);
    console.log(
      `| per waiting poll (RSS / heap growth ÷ polls) | ${((polling.rss - registered.rss) / USERS).toFixed(0)} / ${((polling.heap - registered.heap) / USERS).toFixed(0)} bytes |`,
    );
  } finally {
    for (const w of workers) w.send({ cmd: 'quit' });
    if (server) {
      const exited = new Promise((r) => server!.child.once('exit', r));
      server.child.kill('SIGTERM');
      await exited;
    }
    await drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'client') clientMain();
else if (process.argv[2] === 'idle')
  idleMain().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
