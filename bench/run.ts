/**
 * The benchmark runner (`make bench`, through bench/run.sh):
 *
 * 1. (re)generates the dataset for BENCH_SCALE on BENCH_DB when it is missing;
 * 2. starts an Express hello-world and a bare node:http baseline, and Parley
 *    (node dist/src/main.js, LOG_LEVEL=warn, NODE_ENV=production), each in
 *    its own process on a free port of 127.0.0.1;
 * 3. runs autocannon (16 connections, BENCH_DURATION s after BENCH_WARMUP s)
 *    per scenario with real API keys, then the event-delivery loop;
 * 4. writes bench/results/<date>-<scale>-<db>.md (and the raw .json beside it),
 *    deletes the messages the run posted, and stops what it started.
 *
 * Environment: BENCH_SCALE, BENCH_DB, BENCH_MYSQL_URL (see lib/dataset.ts),
 * BENCH_DURATION (10), BENCH_WARMUP (2), BENCH_CONNECTIONS (16),
 * BENCH_ONLY=key,key (a subset of scenarios), BENCH_REGENERATE=1,
 * BENCH_EVENTS (1,000 deliveries after 3,000 uncounted: the p99 is then the 10th slowest, not the 2nd), BENCH_CPU_PROF=1 (Parley runs with
 * --cpu-prof into bench/.data/prof/), BENCH_NOTE (a line for the results file),
 * BENCH_REPEAT (3: a scenario within 25 % of its target is run this many times
 * and reported by its median; 1 measures each scenario once; a scenario with
 * a flat target is measured in that many pairs with the 10k dataset),
 * BENCH_FLAT=0 (no 10k reference run and no pairs).
 */
import { cpuSecondsOf } from './lib/proc';
import { stopChild } from './lib/stop-child';
import { freshResultBase } from './lib/result-file';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { describeGoal, EVENT_DELIVERY_P99_MS, type Goal, judge, nearTheLine } from './lib/goals';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { BackgroundWork } from '../src/db/settle';
import { backgroundWorkOf, backgroundWorkText } from './lib/background-work';
import { createDb } from '../src/db/connection';
import {
  BENCH_DIR,
  channelMembers,
  Credential,
  Manifest,
  readCredentials,
  readManifest,
  removePosted,
  resolveTarget,
  ROOT,
  Target,
} from './lib/dataset';
import { basic, request } from './lib/http';
import { runDeliveryLoop } from './lib/delivery-loop';
import { describeGc, GcLog, type GcWindow } from './lib/gc-log';
import { runPaced } from './lib/paced';
import { scenarios } from './lib/scenarios';
import { fmtInt } from './lib/progress';

const env = process.env;
const DURATION = Number(env.BENCH_DURATION ?? 10);
const WARMUP = Number(env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 16);
const EVENT_ROUNDS = Math.min(Number(env.BENCH_EVENTS ?? 1000), 2000);
/**
 * Deliveries run and not counted first, so that the figure is the steady
 * state of a server that has been up a while, not its JIT's first minutes.
 * After 300 such rounds V8 was still compiling the path: in the next 1,500
 * deliveries it finished 253 optimizing compilations (983 ms of compile
 * time, on a machine whose two cores the database and this client share),
 * and the p99 was 6.9–7.3 ms; after 3,000 rounds it finished 70 (147 ms)
 * and the p99 was 4.2–4.6 ms, in alternating runs minutes apart (p50 2.3–2.9
 * against 2.0–2.4). The rounds are the measured ones: same channel, same
 * long-poll, same pause.
 */
const EVENT_WARMUP_ROUNDS = 3000;
/** Warm-up and measured rounds together (about 8 ms each on this machine). */
const EVENT_TIME_LIMIT_MS = 120_000;
/** Runs of a scenario whose first result is near its target (goals.ts nearTheLine); the report gives their median. */
const REPEAT = Math.max(1, Math.min(Number(env.BENCH_REPEAT ?? 3), 9));
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;

// ---------------------------------------------------------------- processes

/**
 * BENCH_PIN=1: the load generator (this process, autocannon inside it) on the
 * last core, every server it starts and the database on the others, so that
 * a scenario whose replies are large (the topic list: 121 KB at 1m against
 * 2 KB at 10k) does not count the generator's reading of them against the
 * server. Needs `taskset` (util-linux) and at least two cores.
 */
const PIN = env.BENCH_PIN === '1' ? pinPlan() : null;
function pinPlan(): { servers: string; generator: string } {
  const n = os.cpus().length;
  if (n < 2) throw new Error('BENCH_PIN=1 needs at least two cores');
  return { servers: n === 2 ? '0' : `0-${n - 2}`, generator: String(n - 1) };
}
/** Puts every thread of a running process on these cores (`taskset -a`); a refusal stops the run with taskset's reason. */
function pinProcess(pid: number, cores: string): void {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || String(err);
    throw new Error(`BENCH_PIN: could not put process ${pid} on cores ${cores}: ${why}`, { cause: err });
  }
}
/** The cores a process may run on now, as taskset prints them (`0-1`). */
function coresOf(pid: number): string {
  return /:\s*(\S+)\s*$/.exec(execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' }))![1]!;
}

const children: ChildProcess[] = [];
/** Each started server's collections, by pid (lines only from a server run with --trace-gc). */
const gcLogs = new Map<number, GcLog>();
/** Parley and its 10k twin print their collections: a run's mark-compacts explain its p99 (lib/gc-log.ts). */
const PARLEY_NODE_ARGS = ['--trace-gc'];

/** Starts a process and resolves with the port it prints (`listening <port>`, or Parley's `listening on http://host:port`). */
function startServer(
  name: string,
  args: string[],
  extraEnv: Record<string, string>,
  logFile?: string,
): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const options = { cwd: ROOT, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] as Array<'ignore' | 'pipe'> };
    // taskset execs the program: the child's pid is the server's.
    const child = PIN ? spawn('taskset', ['-c', PIN.servers, process.execPath, ...args], options) : spawn(process.execPath, args, options);
    children.push(child);
    if (child.pid !== undefined) gcLogs.set(child.pid, new GcLog(child.stdout!));
    if (logFile) {
      const log = fs.createWriteStream(logFile);
      child.stdout!.pipe(log);
      child.stderr!.pipe(log);
    }
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s:\n${out}\n${err}`)), 60_000);
    let started = false;
    child.stdout!.on('data', (d: Buffer) => {
      // Once the port is known the rest (Parley's --trace-gc lines among it) goes only to the
      // log and the GC log: kept here, every chunk of a run would rescan all that came before.
      if (started) return;
      out += d.toString();
      const m = /listening (?:on http:\/\/[\d.]+:)?(\d+)/.exec(out);
      if (m) {
        started = true;
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.length > 20_000) err = err.slice(-10_000);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}):\n${out}\n${err}`));
    });
  });
}

const stopServer = (child: ChildProcess): Promise<void> => stopChild(child, (c) => c.kill('SIGTERM'), 10_000);

function killChildren(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
}
process.on('exit', killChildren);
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));

/**
 * Waits (at most 5 minutes) until the database process uses under 5% of a core
 * over two seconds. Deleting an earlier run's messages leaves InnoDB purging
 * and flushing for a minute or more, at up to half the machine: measured on top
 * of that, every figure of the next run (the Express baseline too) came out
 * 40% lower.
 */
async function waitForIdleDatabase(pid: number | undefined): Promise<number | null> {
  if (pid === undefined || cpuSecondsOf(pid) === null) return null;
  const t0 = Date.now();
  let said = false;
  while (Date.now() - t0 < 300_000) {
    const before = cpuSecondsOf(pid)!;
    await new Promise((r) => setTimeout(r, 2000));
    if ((cpuSecondsOf(pid)! - before) / 2 < 0.05) break;
    if (!said) process.stderr.write('waiting for the database to finish its background work (purge, flushing)…\n');
    said = true;
  }
  return (Date.now() - t0) / 1000;
}

/** Resident memory of a process now and at its peak (MiB), from /proc (Linux); null elsewhere. */
interface Memory {
  rssMiB: number;
  peakMiB: number;
}
interface Footprint {
  parley: Memory | null;
  database: Memory | null;
}

function memoryOf(pid: number | undefined): Memory | null {
  if (!pid) return null;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const rss = kib('VmRSS');
    const peak = kib('VmHWM');
    return Number.isFinite(rss) ? { rssMiB: rss / 1024, peakMiB: peak / 1024 } : null;
  } catch {
    return null;
  }
}

function footprintText(f: Footprint): string {
  const one = (name: string, m: Memory | null) =>
    m ? `${name} ${m.rssMiB.toFixed(0)} MiB resident (peak ${m.peakMiB.toFixed(0)} MiB)` : null;
  return [one('Parley', f.parley), one('the database', f.database)].filter(Boolean).join('; ');
}

// ---------------------------------------------------------------- load

interface Row {
  key: string;
  title: string;
  rps: number | null;
  p50: number | null;
  p99: number | null;
  errors: number;
  serverCpu: number | null;
  dbCpu: number | null;
  /** CPU time per request (µs), of the server and of the database: from the same run as its share. */
  serverUs?: number | null;
  dbUs?: number | null;
  loadCpu: number | null;
  /** The server's collections during the measured window (when it prints them). */
  gc?: GcWindow;
  /**
   * For a scenario with a flat target: the median of paired ratios, each a
   * 10k run and the 1m run right after it (pairedFlat below), and the pairs' p99s.
   */
  paired?: { flat: number; p99s: Array<[number, number]> };
  /** Median latency of sequential requests (no concurrency). */
  alone?: number;
  note: string;
  goal?: Goal;
  flat?: boolean;
  raw?: unknown;
}

type LoadRequest = {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  users?: Credential[];
  /** Requests per second over all connections, paced (lib/paced.ts); unset: as fast as answers come. */
  rate?: number;
};

/** Closed-loop load: each connection sends its next request as soon as the last is answered. */
async function runLoad(port: number, s: LoadRequest, seconds: number) {
  let next = 0;
  return autocannon({
    // Several users: each connection authenticates as the next one.
    setupClient: s.users?.length
      ? (client) => client.setHeaders({ ...s.headers, authorization: basic(s.users![next++ % s.users!.length]!) })
      : undefined,
    url: `http://127.0.0.1:${port}${s.path}`,
    connections: CONNECTIONS,
    duration: seconds,
    method: s.method,
    headers: s.headers,
    body: s.body,
    timeout: 30,
  });
}

/** One measured run of a load, whichever generator ran it. */
interface LoadResult {
  rps: number;
  p50: number | null;
  p99: number | null;
  errors: number;
  statusCodes: unknown;
  /** Said in the row's note (how the load was offered). */
  how?: string;
  raw: unknown;
}

/** autocannon, closed loop: the server's saturation. */
async function closedLoad(port: number, req: LoadRequest, seconds: number): Promise<LoadResult> {
  const r = await runLoad(port, req, seconds);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    statusCodes: r.statusCodeStats,
    raw: r,
  };
}

/**
 * lib/paced.ts, at the request's offered rate. The warm-up is a paced run of
 * its own (measure runs it first): counted in one stream, the queue a cold
 * server builds in its first second took the next four to drain at 500/s,
 * and that is not what a client of a warm server sees.
 */
async function pacedLoad(port: number, req: LoadRequest, seconds: number): Promise<LoadResult> {
  const r = await runPaced({
    port,
    method: req.method,
    path: req.path,
    headers: req.headers,
    body: req.body,
    auth: req.users?.map(basic),
    connections: CONNECTIONS,
    rate: req.rate!,
    seconds,
  });
  const at = (q: number) =>
    r.latencies.length ? r.latencies[Math.min(r.latencies.length - 1, Math.ceil(q * r.latencies.length) - 1)]! : null;
  return {
    rps: r.rps,
    p50: at(0.5),
    p99: at(0.99),
    errors: r.errors,
    statusCodes: r.statusCodes,
    how: `paced, one request due every ${num(1000 / req.rate!, 1)} ms`,
    raw: { ...r, latencies: undefined, p90: at(0.9), p999: at(0.999), max: r.latencies.at(-1) ?? null },
  };
}

async function measure(
  key: string,
  title: string,
  port: number,
  req: LoadRequest,
  pids: { server?: number; db?: number },
  note: string,
  goal?: Goal,
  flat?: boolean,
): Promise<Row> {
  const load = req.rate ? pacedLoad : closedLoad;
  if (WARMUP > 0) await load(port, req, WARMUP);
  const before = { server: cpuSecondsOf(pids.server), db: cpuSecondsOf(pids.db), self: process.cpuUsage(), at: Date.now() };
  const r = await load(port, req, DURATION);
  const wall = (Date.now() - before.at) / 1000;
  const pct = (now: number | null, then: number | null) => (now !== null && then !== null ? (100 * (now - then)) / wall : null);
  const self = process.cpuUsage(before.self);
  const gcLog = pids.server !== undefined ? gcLogs.get(pids.server) : undefined;
  const gc = gcLog?.tracing ? gcLog.window(before.at, Date.now()) : undefined;
  const notes = [note, r.how, r.errors ? JSON.stringify(r.statusCodes) : undefined, gc ? `server GC: ${describeGc(gc)}` : undefined].filter(
    Boolean,
  );
  const row: Row = {
    key,
    title,
    rps: r.rps,
    p50: r.p50,
    p99: r.p99,
    errors: r.errors,
    serverCpu: pct(cpuSecondsOf(pids.server), before.server),
    dbCpu: pct(cpuSecondsOf(pids.db), before.db),
    loadCpu: (100 * (self.user + self.system)) / 1e6 / wall,
    gc,
    note: notes.join('; '),
    goal,
    flat,
    raw: r.raw,
  };
  row.serverUs = perRequestUs(row.serverCpu, row.rps);
  row.dbUs = perRequestUs(row.dbCpu, row.rps);
  process.stderr.write(
    `  ${title}: ${fmtInt(row.rps!)} req/s, p50 ${num(row.p50, 1)} ms, p99 ${num(row.p99, 1)} ms${r.errors ? `, ${r.errors} errors` : ''}` +
      ` (server CPU ${row.serverCpu?.toFixed(0) ?? '?'}%, db ${row.dbCpu?.toFixed(0) ?? '-'}%)\n`,
  );
  return row;
}

/** CPU time per request in µs, from a share of one core (%) and the rate of the same run. */
const perRequestUs = (pct: number | null, rps: number | null) => (pct !== null && rps ? (pct * 10_000) / rps : null);

/**
 * One row for several runs of a scenario: the median of each figure, errors
 * summed, and every run's rate and p99 in the note, so the spread stays
 * visible. Each median is one run's value (percentile takes the lower middle
 * of an even number), though not always the same run's for every figure;
 * CPU per request is taken per run first, so its median is one run's too.
 */
function medianRow(runs: Row[]): Row {
  if (runs.length === 1) return runs[0]!;
  const med = (pick: (r: Row) => number | null) => {
    const xs = runs.map(pick).filter((x): x is number => x !== null);
    return xs.length ? percentile(xs, 50) : null;
  };
  const first = runs[0]!;
  return {
    ...first,
    rps: med((r) => r.rps),
    p50: med((r) => r.p50),
    p99: med((r) => r.p99),
    serverCpu: med((r) => r.serverCpu),
    dbCpu: med((r) => r.dbCpu),
    serverUs: med((r) => r.serverUs ?? null),
    dbUs: med((r) => r.dbUs ?? null),
    loadCpu: med((r) => r.loadCpu),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    note:
      `${first.note}; median of ${runs.length} runs (req/s ${runs.map((r) => num(r.rps)).join(' / ')}; ` +
      `p99 ${runs.map((r) => num(r.p99)).join(' / ')} ms` +
      (runs.every((r) => r.gc) ? `; mark-compacts ${runs.map((r) => r.gc!.major).join(' / ')}` : '') +
      ')',
    raw: runs.map((r) => r.raw),
  };
}

// ---------------------------------------------------------------- mixed load

/**
 * Sends and reads at the same time: the send scenario's 16 senders POST while
 * as many connections GET /messages newest (the `mixed` key). On SQLite a
 * write transaction once held the only connection, so every read queued behind
 * the sends; the two p99s show whether reads still wait for writes.
 */
async function measureMixed(port: number, send: LoadRequest, read: LoadRequest, pids: { server?: number; db?: number }): Promise<Row[]> {
  if (WARMUP > 0) await Promise.all([runLoad(port, send, WARMUP), runLoad(port, read, WARMUP)]);
  const before = { server: cpuSecondsOf(pids.server), db: cpuSecondsOf(pids.db), at: Date.now() };
  const [s, r] = await Promise.all([runLoad(port, send, DURATION), runLoad(port, read, DURATION)]);
  const wall = (Date.now() - before.at) / 1000;
  const pct = (now: number | null, then: number | null) => (now !== null && then !== null ? (100 * (now - then)) / wall : null);
  const row = (key: string, title: string, res: Awaited<ReturnType<typeof runLoad>>): Row => {
    const errors = res.errors + res.timeouts + res.non2xx;
    return {
      key,
      title,
      rps: res.requests.average,
      p50: res.latency.p50,
      p99: res.latency.p99,
      errors,
      serverCpu: pct(cpuSecondsOf(pids.server), before.server),
      dbCpu: pct(cpuSecondsOf(pids.db), before.db),
      loadCpu: null,
      // Each side's rate, but the CPU of both: no per-request figure.
      serverUs: null,
      dbUs: null,
      note:
        `both at once, ${CONNECTIONS}+${CONNECTIONS} connections; CPU for the pair` +
        (errors ? `; ${JSON.stringify(res.statusCodeStats)}` : ''),
      raw: res,
    };
  };
  const rows = [
    row('mixed-send', `mixed: POST /messages, ${CONNECTIONS} senders, while GET /messages runs`, s),
    row('mixed-read', `mixed: GET /messages newest (100) while ${CONNECTIONS} senders post`, r),
  ];
  for (const x of rows)
    process.stderr.write(
      `  ${x.title}: ${fmtInt(x.rps!)} req/s, p50 ${x.p50} ms, p99 ${x.p99} ms${x.errors ? `, ${x.errors} errors` : ''}\n`,
    );
  return rows;
}

// ---------------------------------------------------------------- event delivery

interface EventResult {
  skipped: string | null;
  rounds: number;
  deliveryMs: number[];
  postMs: number[];
}

async function eventLatency(port: number, manifest: Manifest, creds: Map<number, Credential>): Promise<EventResult> {
  const { skipped, rounds } = await runDeliveryLoop({
    port,
    manifest,
    creds,
    warmup: EVENT_WARMUP_ROUNDS,
    rounds: EVENT_ROUNDS,
    timeLimitMs: EVENT_TIME_LIMIT_MS,
    label: 'latency-probe',
  });
  return {
    skipped,
    rounds: rounds.length,
    deliveryMs: rounds.map((r) => r.delivered - r.sent),
    postMs: rounds.map((r) => r.answered - r.sent),
  };
}

const percentile = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

// ---------------------------------------------------------------- dataset

function generate(target: Target): void {
  process.stderr.write(`dataset ${target.scale.name} on ${target.db} missing: generating it\n`);
  execFileSync(process.execPath, [path.join(__dirname, 'generate.js')], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
}

/**
 * A manifest, a database that still holds the messages it lists, generated
 * under every migration this tree has: a dataset from an older schema is
 * regenerated rather than migrated at server start (which would time the
 * migration, and keep rows as older code stored them).
 */
async function datasetPresent(target: Target): Promise<boolean> {
  const m = readManifest(target);
  if (!m) return false;
  if (target.db === 'sqlite' && !fs.existsSync(path.join(target.dataDir, 'parley.sqlite3'))) return false;
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    const row = await db('messages').where('id', '<=', m.maxMessageId).count({ n: '*' }).first();
    if (Number(row?.n) !== m.counts.messages) return false;
    // The schema the rows were generated under (the server migrates the database at start).
    const applied = new Set(m.migrations ?? (await db('knex_migrations').pluck('name')).map(String));
    const missing = buildMigrations().filter((name) => !applied.has(name));
    if (missing.length) {
      process.stderr.write(`the ${target.scale.name} dataset predates migration(s) ${missing.join(', ')}\n`);
      return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    await db.destroy();
  }
}

/** The migrations of this tree (src/db/migrations/NNN_name.ts, which src/db/migrate.ts lists). */
function buildMigrations(): string[] {
  const dir = path.join(ROOT, 'src', 'db', 'migrations');
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d+_.*\.ts$/.test(f) && !f.endsWith('.test.ts'))
    .map((f) => f.replace(/\.ts$/, ''));
}

async function databaseInfo(target: Target): Promise<{ version: string; detail: string; pid?: number }> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    if (target.db === 'sqlite') {
      const r = await db.raw('select sqlite_version() as v');
      return { version: `SQLite ${r[0].v} (@rocicorp/zero-sqlite3, WAL)`, detail: '' };
    }
    const [rows] = await db.raw(
      'select version() as v, @@innodb_buffer_pool_size as bp, @@thread_handling as th, @@thread_pool_size as tps, @@pid_file as pidFile',
    );
    const r = rows[0];
    let pid: number | undefined;
    try {
      pid = Number(fs.readFileSync(String(r.pidFile), 'utf8').trim()) || undefined;
    } catch {
      /* not on this machine's filesystem */
    }
    const via = target.databaseUrl && new URL(target.databaseUrl).searchParams.get('socket') ? 'Unix socket' : 'TCP';
    return {
      version: `MariaDB ${r.v}`,
      detail: `buffer pool ${Math.round(Number(r.bp) / 2 ** 20)} MiB, ${String(r.th)}${r.th === 'pool-of-threads' ? ` (${String(r.tps)} thread group${Number(r.tps) === 1 ? '' : 's'})` : ''}, Parley connects over ${via}`,
      pid,
    };
  } finally {
    await db.destroy();
  }
}

// ---------------------------------------------------------------- report

function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
}

/**
 * The code label of this run, read once: the report, the raw results and the
 * search for the 10k reference must agree even if files change while the run
 * goes on (a 10k reference run started from here inherits it).
 */
const CODE = env.BENCH_CODE ?? gitDescribe();

function gitDescribe(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src'], { cwd: ROOT }).toString().trim();
    return dirty ? `${head} + uncommitted changes in src/` : head;
  } catch {
    return 'unknown';
  }
}

const num = (x: number | null, digits = 0) =>
  x === null || Number.isNaN(x) ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** "76% · 1,080 µs": share of a core, and CPU time per request. */
function cpuCell(pct: number | null, us: number | null | undefined): string {
  if (pct === null) return '–';
  return us ? `${num(pct)}% · ${num(us)} µs` : `${num(pct)}%`;
}

function report(opts: {
  target: Target;
  manifest: Manifest;
  dbInfo: { version: string; detail: string };
  rows: Row[];
  baseline: Row;
  events: EventResult | null;
  started: Date;
  loadavg: number[];
  /** Seconds spent waiting for the database's background work to finish before measuring. */
  settled: number | null;
  /** What the database still had to write and purge when measuring began (MariaDB). */
  backgroundWork: BackgroundWork | null;
  /** The 10k run of the same database the "flat" column divides by (null at 10k, or when none was found). */
  reference: Reference | null;
  /** Memory of Parley and of the database when the last scenario ended. */
  footprint: Footprint | null;
}): string {
  const { target, manifest: m, rows, baseline, events, reference } = opts;
  const nodeHttp = rows.find((r) => r.key === 'baseline-node-http') ?? null;
  const c = m.counts;
  const lines: string[] = [];
  const date = opts.started.toISOString().slice(0, 10);
  lines.push(`# Benchmark: ${target.scale.name} scale on ${target.db === 'sqlite' ? 'SQLite' : 'MariaDB'}, ${date}`, '');
  lines.push(
    '**Provisional.** The load generator (autocannon) shares this 2-core machine with the server and the database, and other',
    'jobs (test suites) may have run at the same time: read the figures as relative, and compare ratios rather than absolutes.',
    `Load average when the run started: ${opts.loadavg.map((l) => l.toFixed(2)).join(', ')}.` +
      (opts.settled === null ? '' : ` The database was idle after ${opts.settled.toFixed(0)} s of waiting.`) +
      (opts.backgroundWork ? ` ${backgroundWorkText(opts.backgroundWork)}` : ''),
  );
  if (env.BENCH_NOTE) lines.push('', env.BENCH_NOTE);
  lines.push('', '| | |', '|---|---|');
  lines.push(`| machine | ${machine()} |`);
  lines.push(`| database | ${opts.dbInfo.version}${opts.dbInfo.detail ? `, ${opts.dbInfo.detail}` : ''} |`);
  lines.push(`| code | ${CODE} |`);
  if (opts.footprint) lines.push(`| memory at the end | ${footprintText(opts.footprint)} |`);
  lines.push(
    `| dataset | ${fmtInt(c.users!)} users, ${fmtInt(c.channels!)} channels, ${fmtInt(c.subscriptions!)} subscriptions, ` +
      `${fmtInt(c.messages!)} messages, ${fmtInt(c.user_messages!)} user_messages, ${fmtInt(c.reactions!)} reactions, ` +
      `${fmtInt(c.unread_total!)} unread, ${fmtInt(c.starred_total!)} starred |`,
  );
  lines.push(
    `| generated | ${m.generatedAt.slice(0, 16).replace('T', ' ')} in ${m.loadSeconds.total!.toFixed(1)} s ` +
      `(${Object.entries(m.loadSeconds)
        .filter(([k]) => k !== 'total')
        .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
        .join(', ')}) |`,
  );
  lines.push(
    `| load | autocannon, ${CONNECTIONS} connections, ${DURATION} s per scenario after ${WARMUP} s of warm-up; Parley with LOG_LEVEL=warn, NODE_ENV=production${PIN ? `; pinned (BENCH_PIN): the generator on core ${PIN.generator}, the servers and the database on ${PIN.servers}` : ''} |`,
  );
  lines.push('');
  const at1m = target.scale.name === '1m' && target.db === 'mariadb';
  lines.push(
    `| scenario | req/s | p50 ms | p99 ms | × Express | × node:http | flat | alone ms | errors | server CPU | DB CPU | check | target | ${at1m ? 'verdict' : 'verdict (targets are for 1m on MariaDB)'} |`,
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|');
  for (const r of [baseline, ...rows]) {
    const ratio = (b: Row | null) => (r.rps !== null && b?.rps ? r.rps / b.rps : null);
    const flat = r.paired ? r.paired.flat : flatRatio(r, reference);
    lines.push(
      `| ${r.title} | ${num(r.rps)} | ${num(r.p50)} | ${num(r.p99)} | ${num(ratio(baseline), 3)} | ${num(ratio(nodeHttp), 3)} | ${r.flat ? num(flat, 2) : ''} | ` +
        `${r.alone === undefined ? '' : num(r.alone, 1)} | ${r.errors} | ` +
        `${cpuCell(r.serverCpu, r.serverUs)} | ${cpuCell(r.dbCpu, r.dbUs)} | ${r.note} | ` +
        `${r.goal ? describeGoal(r.goal) : ''} | ${r.goal ? judge(r.goal, r, baseline.rps, target.scale.name === 'small' ? 1 : flat) : ''} |`,
    );
  }
  lines.push('');
  lines.push(
    reference
      ? `"flat": p99 here ÷ p99 of the same scenario at 10k on the same database (${reference.label}).`
      : target.scale.name === 'small'
        ? '"flat": this is the 10k run the larger scales divide by.'
        : '"flat": no 10k run of this database was found (run `make bench BENCH_SCALE=10k` first, or leave BENCH_FLAT unset).',
  );
  if (rows.some((r) => r.paired)) {
    lines.push(
      `A scenario with a flat target is measured in ${REPEAT} pairs instead: the 10k dataset on a second Parley of the same build, ` +
        'then this dataset right after it. Its "flat" is the median of the pairs\' quotients, its other figures the median of ' +
        'its runs here; the note lists each pair. Two runs far apart in time would compare the machine as much as the scales.',
    );
  }
  lines.push('"alone": median of 5 requests sent one after another before the load (latency without concurrency).');
  lines.push(
    'CPU columns: share of one core used during the measured seconds (the server process; mariadbd), and that CPU time per request,',
  );
  // Parley's scenarios only: against a hello-world the generator is the busy side (over 90 % of a
  // core), and the mixed rows do not measure it.
  const loads = rows.filter((r) => !r.key.startsWith('baseline') && r.loadCpu !== null).map((r) => r.loadCpu!);
  lines.push('which moves less than the rates when the machine is busier or quieter. The load generator used');
  lines.push(`${loads.length ? num(loads.reduce((a, x) => a + x, 0) / loads.length) : '–'}% of a core on average in Parley's scenarios.`);
  lines.push('');
  lines.push('## Event delivery', '');
  if (!events || events.skipped) {
    lines.push(`Skipped: ${events?.skipped ?? 'not run'}.`);
  } else {
    const d = events.deliveryMs;
    const p = events.postMs;
    // Per round: how long after the sender's response the receiver had the event (negative: before it).
    const gap = d.map((x, i) => x - p[i]!);
    lines.push(
      `User A posts to a 2-subscriber channel while user B long-polls GET /events; the figure is the time from A's request to B's`,
      `response carrying the message (so it includes the send itself). ${events.rounds} deliveries, one at a time, after ${EVENT_WARMUP_ROUNDS} not counted.`,
      '',
      '| measure | p50 ms | p99 ms | max ms | target | verdict |',
      '|---|---:|---:|---:|---|---|',
      `| send → GET /events returns | ${num(percentile(d, 50), 1)} | ${num(percentile(d, 99), 1)} | ${num(Math.max(...d), 1)} | p99 ≤ ${EVENT_DELIVERY_P99_MS} ms | ` +
        `${percentile(d, 99) <= EVENT_DELIVERY_P99_MS ? 'met' : `missed: p99 ${num(percentile(d, 99), 1)} ms > ${EVENT_DELIVERY_P99_MS}`} |`,
      `| POST /messages alone (same loop) | ${num(percentile(p, 50), 1)} | ${num(percentile(p, 99), 1)} | ${num(Math.max(...p), 1)} | | |`,
      `| B's GET /events returns after A's POST returned | ${num(percentile(gap, 50), 1)} | ${num(percentile(gap, 99), 1)} | ${num(Math.max(...gap), 1)} | | |`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

// ---------------------------------------------------------------- the "flat" column

interface Reference {
  label: string;
  p99: Map<string, number>;
}

function readReference(file: string): { code?: string; started?: string; pinned?: boolean; rows: Row[] } | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * The 10k run the "flat" column divides by: the newest 10k results of the same
 * database made from the same code. Without one, the 10k scale runs first (the
 * same scenarios; about a minute plus its dataset the first time) unless
 * BENCH_FLAT=0. Comparing with a 10k run of other code would credit or blame
 * the scale for a code change.
 */
async function flatReference(target: Target): Promise<Reference | null> {
  const code = CODE;
  const find = () => {
    const candidates = [path.join(BENCH_DIR, 'results'), path.join(BENCH_DIR, '.data', 'results')]
      .flatMap((dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => path.join(dir, f)) : []))
      .filter((f) => f.endsWith(`-small-${target.db}.json`))
      .map((f) => ({ f, data: readReference(f), mtime: fs.statSync(f).mtimeMs }))
      // Pinned runs are compared with pinned ones only (BENCH_PIN moves the generator's share).
      .filter((c) => c.data && c.data.code === code && (c.data.pinned ?? false) === (PIN !== null))
      .sort((a, b) => b.mtime - a.mtime);
    return candidates[0] ?? null;
  };
  let found = find();
  if (!found && env.BENCH_FLAT !== '0') {
    process.stderr.write('no 10k run of this code on this database: running the 10k scale first for the "flat" column\n');
    execFileSync(process.execPath, [__filename], { stdio: 'inherit', env: { ...env, BENCH_SCALE: 'small', BENCH_CODE: CODE } });
    found = find();
  }
  if (!found?.data) return null;
  const p99 = new Map<string, number>();
  for (const r of found.data.rows) if (r.p99 !== null) p99.set(r.key, r.p99);
  return { label: `${path.relative(ROOT, found.f)}, ${found.data.started?.slice(0, 16).replace('T', ' ') ?? ''}`, p99 };
}

function flatRatio(r: Row, reference: Reference | null): number | null {
  const base = reference?.p99.get(r.key);
  return base && r.p99 !== null ? r.p99 / base : null;
}

// ---------------------------------------------------------------- Parley

/** How the benchmark runs Parley on a dataset. */
function parleyEnv(target: Target): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    RATE_LIMITS: 'off',
    DATA_DIR: target.dataDir,
    DATABASE_URL: target.databaseUrl ?? '',
    VALIDATE_RESPONSES: '',
  };
}

type Scenario = ReturnType<typeof scenarios>[number];

/** A scenario's request as autocannon sends it: its user's key (or each of its users' in turn), its form body. */
function loadRequestOf(s: Scenario): LoadRequest {
  const headers: Record<string, string> = { ...s.headers };
  if (s.user) headers.authorization = basic(s.user);
  if (s.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  return {
    path: s.path,
    method: s.method,
    headers,
    body: s.form ? new URLSearchParams(s.form).toString() : undefined,
    users: s.users,
    rate: s.rate,
  };
}

// ---------------------------------------------------------------- paired "flat"

/** Parley on the 10k dataset of the same database, started at most once per run. */
let twinServer: Promise<{ child: ChildProcess; port: number; target: Target } | null> | null = null;

async function stopTwins(): Promise<void> {
  const twin = await twinServer;
  if (twin) await stopServer(twin.child);
}

/**
 * The same scenario on the 10k dataset, on a second Parley of this build
 * (null at 10k, with BENCH_FLAT=0, or when the 10k dataset is missing):
 * measured right before each run here, so that the quotient compares two
 * scales, not two moments of a machine whose speed drifts.
 */
async function smallTwin(target: Target, key: string): Promise<{ run: () => Promise<Row> } | null> {
  if (target.scale.name === 'small' || env.BENCH_FLAT === '0') return null;
  twinServer ??= (async () => {
    const small = resolveTarget({ ...env, BENCH_SCALE: 'small' });
    if (!readManifest(small) || !(await datasetPresent(small))) return null;
    const twin = await startServer(
      'Parley (10k)',
      [...PARLEY_NODE_ARGS, path.join(ROOT, 'dist', 'src', 'main.js')],
      parleyEnv(small),
      path.join(small.dir, 'server.log'),
    );
    return { ...twin, target: small };
  })();
  const twin = await twinServer;
  if (!twin) return null;
  const manifest = readManifest(twin.target)!;
  const scenario = scenarios(
    manifest,
    readCredentials(twin.target),
    await channelMembers(twin.target, manifest.targets.channel100.id),
  ).find((x) => x.key === key);
  if (!scenario) return null;
  const dbPid = (await databaseInfo(twin.target)).pid;
  return {
    run: () =>
      measure(`${key}-10k`, `${scenario.title} at 10k`, twin.port, loadRequestOf(scenario), { server: twin.child.pid, db: dbPid }, ''),
  };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const started = new Date();
  const loadavg = os.loadavg();
  const target = resolveTarget();
  const reference = target.scale.name === 'small' ? null : await flatReference(target);
  if (env.BENCH_REGENERATE === '1' || !(await datasetPresent(target))) generate(target);
  const manifest = readManifest(target)!;
  const creds = readCredentials(target);
  const leftovers = await removePosted(target, manifest);
  if (leftovers) process.stderr.write(`removed ${leftovers} messages left by an earlier run\n`);
  const dbInfo = await databaseInfo(target);
  if (PIN) {
    pinProcess(process.pid, PIN.generator);
    const dbPid = dbInfo.pid;
    if (dbPid !== undefined) {
      // Given back as they were (a service may have its own), unless the database has gone meanwhile.
      const before = coresOf(dbPid);
      pinProcess(dbPid, PIN.servers);
      process.on('exit', () => {
        try {
          pinProcess(dbPid, before);
        } catch (err) {
          process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        }
      });
    }
  }
  const settled = await waitForIdleDatabase(dbInfo.pid);
  const backgroundWork = await backgroundWorkOf(target);

  const rows: Row[] = [];
  let baseline: Row;
  let events: EventResult | null = null;
  let footprint: Footprint | undefined;
  process.stderr.write(`benchmark ${target.scale.name} on ${target.db}: ${DURATION} s per scenario, ${CONNECTIONS} connections\n`);
  {
    const express = await startServer('express baseline', [path.join(__dirname, 'baseline.js'), 'express'], {
      PORT: '0',
      NODE_ENV: 'production',
    });
    baseline = await measure(
      'baseline-express',
      'baseline: Express 5 hello-world',
      express.port,
      { path: '/', method: 'GET', headers: {} },
      { server: express.child.pid },
      'same machine',
    );
    await stopServer(express.child);
    const bare = await startServer('node:http baseline', [path.join(__dirname, 'baseline.js'), 'node-http'], {
      PORT: '0',
      NODE_ENV: 'production',
    });
    rows.push(
      await measure(
        'baseline-node-http',
        'baseline: bare node:http hello-world',
        bare.port,
        { path: '/', method: 'GET', headers: {} },
        { server: bare.child.pid },
        'for scale',
      ),
    );
    await stopServer(bare.child);
  }

  const profDir = path.join(BENCH_DIR, '.data', 'prof');
  const nodeArgs = [
    ...PARLEY_NODE_ARGS,
    ...(env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
    ...(env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a && !PARLEY_NODE_ARGS.includes(a)),
  ];
  const parley = await startServer(
    'Parley',
    [...nodeArgs, path.join(ROOT, 'dist', 'src', 'main.js')],
    parleyEnv(target),
    path.join(target.dir, 'server.log'),
  );
  try {
    const agent = new http.Agent({ keepAlive: true });
    for (const s of scenarios(manifest, creds, await channelMembers(target, manifest.targets.channel100.id))) {
      if (ONLY && !ONLY.has(s.key)) continue;
      const auth = s.user ? basic(s.user) : null;
      const pre = await request(agent, parley.port, s.method, s.path, auth, s.form);
      if (pre.status === 501) {
        rows.push({
          key: s.key,
          title: s.title,
          rps: null,
          p50: null,
          p99: null,
          errors: 0,
          serverCpu: null,
          dbCpu: null,
          loadCpu: null,
          note: 'skipped: 501 not implemented',
          goal: s.goal,
          flat: s.flat,
        });
        continue;
      }
      let note: string;
      try {
        note = s.check(pre);
      } catch (err) {
        process.stderr.write(`  ${s.title}: preflight failed: ${err instanceof Error ? err.message : String(err)}\n`);
        rows.push({
          key: s.key,
          title: s.title,
          rps: null,
          p50: null,
          p99: null,
          errors: 1,
          serverCpu: null,
          dbCpu: null,
          loadCpu: null,
          note: `preflight failed: ${String(err instanceof Error ? err.message : err).slice(0, 120)}`,
          goal: s.goal,
          flat: s.flat,
        });
        continue;
      }
      // Latency without concurrency: the median of 5 requests one after another.
      const alone: number[] = [];
      for (let i = 0; i < 5; i++) alone.push((await request(agent, parley.port, s.method, s.path, auth, s.form)).ms);
      if (s.users?.length) note += `; ${s.users.length} users`;
      if (s.headers)
        note += `; ${Object.entries(s.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')}`;
      const run = () =>
        measure(s.key, s.title, parley.port, loadRequestOf(s), { server: parley.child.pid, db: dbInfo.pid }, note, s.goal, s.flat);
      const twin = s.goal?.flat !== undefined ? await smallTwin(target, s.key) : null;
      const runs: Row[] = [];
      const pairs: Array<[number, number]> = [];
      if (twin) {
        while (runs.length < REPEAT) {
          const small = await twin.run();
          const large = await run();
          runs.push(large);
          if (small.p99 && large.p99) pairs.push([small.p99, large.p99]);
        }
      } else {
        runs.push(await run());
        if (s.goal && nearTheLine(s.goal, runs[0]!, baseline.rps)) {
          while (runs.length < REPEAT) runs.push(await run());
        }
      }
      const row = medianRow(runs);
      if (pairs.length) {
        row.paired = {
          flat: percentile(
            pairs.map(([a, b]) => b / a),
            50,
          ),
          p99s: pairs,
        };
        row.note += `; paired p99 10k → here: ${pairs.map(([a, b]) => `${num(a)} → ${num(b)}`).join(', ')} ms`;
      }
      row.alone = percentile(alone, 50);
      rows.push(row);
    }
    agent.destroy();
    if (!ONLY || ONLY.has('mixed')) {
      const all = scenarios(manifest, creds, await channelMembers(target, manifest.targets.channel100.id));
      const send = all.find((s) => s.key === 'send')!;
      const newest = all.find((s) => s.key === 'newest')!;
      rows.push(
        ...(await measureMixed(parley.port, loadRequestOf(send), loadRequestOf(newest), { server: parley.child.pid, db: dbInfo.pid })),
      );
    }
    if (!ONLY || ONLY.has('events')) {
      events = await eventLatency(parley.port, manifest, creds);
      if (events.skipped) process.stderr.write(`  event delivery: skipped (${events.skipped})\n`);
      else
        process.stderr.write(
          `  event delivery: p50 ${percentile(events.deliveryMs, 50).toFixed(1)} ms, p99 ${percentile(events.deliveryMs, 99).toFixed(1)} ms over ${events.rounds}\n`,
        );
    }
    footprint = { parley: memoryOf(parley.child.pid), database: memoryOf(dbInfo.pid) };
  } finally {
    await stopServer(parley.child);
    await stopTwins();
    const removed = await removePosted(target, manifest);
    process.stderr.write(`removed the ${fmtInt(removed)} messages this run posted\n`);
  }

  const md = report({
    target,
    manifest,
    dbInfo,
    rows,
    baseline,
    events,
    started,
    loadavg,
    settled,
    backgroundWork,
    reference,
    footprint: footprint ?? null,
  });
  // A partial run (BENCH_ONLY) does not replace the committed results of a full one.
  const resultsDir = ONLY ? path.join(BENCH_DIR, '.data', 'results') : path.join(BENCH_DIR, 'results');
  const base = freshResultBase(resultsDir, started, `${target.scale.name}-${target.db}`, ['.md', '.json']);
  fs.writeFileSync(`${base}.md`, md);
  const code = CODE;
  fs.writeFileSync(
    `${base}.json`,
    JSON.stringify(
      {
        started: started.toISOString(),
        code,
        pinned: PIN !== null,
        loadavg,
        manifest,
        dbInfo,
        machine: machine(),
        baseline,
        rows,
        events,
        footprint,
        backgroundWork,
      },
      null,
      1,
    ),
  );
  process.stdout.write(md + '\n');
  process.stderr.write(`results: ${path.relative(ROOT, base)}.md (raw: .json)\n`);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
