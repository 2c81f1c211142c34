/**
 * Where a send → event delivery's time goes, delivery by delivery: the
 * loop of bench/run.ts's event figure (A posts to a 2-member channel while B
 * long-polls), with Parley in a child process that records, for each send,
 * when it arrived, its SQL statements, when it was answered and its process
 * CPU, and every V8 collection. Both processes read one clock
 * (performance.timeOrigin + performance.now()), so the phases line up.
 * Prints the percentiles, the median of each phase, how many deliveries a
 * young-generation collection overlapped, and the slowest deliveries
 * phase by phase (ADR 0023 came from this view).
 *
 *   node dist/bench/delivery-trace.js   (BENCH_SCALE, BENCH_DB, BENCH_MYSQL_URL as bench/run.ts)
 *   TRACE_WARMUP=3000  TRACE_ROUNDS=1500  TRACE_SLOWEST=12; node flags pass through (--trace-gc-nvp…)
 */
// The server's own V8 flags (ADR 0025): Parley runs in this process.
import '../src/runtime-flags';
import { fork } from 'node:child_process';
import http from 'node:http';
import { performance, PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import pino from 'pino';
import { listen, startContext } from '../src/server';
import { readCredentials, readManifest, removePosted, resolveTarget } from './lib/dataset';
import { type DeliveryRound, now, runDeliveryLoop } from './lib/delivery-loop';
import { inProcessConfig } from './lib/in-process';

const env = process.env;
const WARMUP = Number(env.TRACE_WARMUP ?? 3000);
const ROUNDS = Number(env.TRACE_ROUNDS ?? 1500);
const SLOWEST = Number(env.TRACE_SLOWEST ?? 12);

interface Statement {
  start: number;
  end: number;
  sql: string;
}
interface SendRecord {
  arrived: number;
  finished: number;
  cpuMs: number;
  statements: Statement[];
}
interface Collection {
  at: number;
  ms: number;
  young: boolean;
}
interface Dump {
  sends: SendRecord[];
  gcs: Collection[];
}

/** The child: Parley with its sends and collections recorded. */
async function serve(): Promise<void> {
  const ctx = await startContext(inProcessConfig(resolveTarget(), { NODE_ENV: 'production' }));
  const server = await listen(ctx, pino({ level: 'silent' }));
  const gcs: Collection[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail: { kind: number } }).detail.kind;
      gcs.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, young: kind === perfConstants.NODE_PERFORMANCE_GC_MINOR });
    }
  }).observe({ entryTypes: ['gc'] });
  const sends: SendRecord[] = [];
  let current: SendRecord | null = null;
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method !== 'POST' || !req.url?.startsWith('/api/v1/messages')) return;
    const cpu0 = process.cpuUsage();
    const record: SendRecord = { arrived: now(), finished: 0, cpuMs: 0, statements: [] };
    current = record;
    sends.push(record);
    res.once('finish', () => {
      record.finished = now();
      const cpu = process.cpuUsage(cpu0);
      record.cpuMs = (cpu.user + cpu.system) / 1000;
      if (current === record) current = null;
    });
  });
  const pending = new Map<string, { record: SendRecord; start: number; sql: string }>();
  ctx.db.on('query', (q: { __knexQueryUid?: string; sql: string }) => {
    if (current && q.__knexQueryUid)
      pending.set(q.__knexQueryUid, { record: current, start: now(), sql: q.sql.replace(/\s+/g, ' ').slice(0, 50) });
  });
  ctx.db.on('query-response', (_r: unknown, q: { __knexQueryUid: string }) => {
    const p = pending.get(q.__knexQueryUid);
    if (!p) return;
    pending.delete(q.__knexQueryUid);
    p.record.statements.push({ start: p.start, end: now(), sql: p.sql });
  });
  process.on('message', (m) => {
    if (m === 'dump') process.send!({ sends, gcs } satisfies Dump, () => process.exit(0));
  });
  process.send!({ port: (server.address() as { port: number }).port });
}

/** The parent: A and B, one delivery at a time, as bench/run.ts's event figure. */
async function drive(): Promise<void> {
  const target = resolveTarget();
  const manifest = readManifest(target);
  if (!manifest) throw new Error(`no dataset for ${target.scale.name} on ${target.db}: run make bench first`);
  const creds = readCredentials(target);
  const child = fork(__filename, ['serve'], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  const { skipped, rounds } = await runDeliveryLoop({
    port,
    manifest,
    creds,
    warmup: WARMUP,
    rounds: ROUNDS,
    label: 'delivery-trace',
    progress: (i) => process.stderr.write(`  ${i < 0 ? `warm-up ${i + WARMUP}` : `round ${i}`}\n`),
  }).catch((err: unknown) => {
    child.kill();
    throw err;
  });
  if (skipped) {
    child.kill();
    throw new Error(skipped);
  }
  const dump = await new Promise<Dump>((resolve) => {
    child.once('message', (m: Dump) => resolve(m));
    child.send('dump');
  });
  // The dataset stays as generated for the next run.
  process.stderr.write(`removed the ${await removePosted(target, manifest)} messages this run posted\n`);
  report(rounds, dump);
}

function report(rounds: DeliveryRound[], { sends, gcs }: Dump): void {
  const young = gcs.filter((g) => g.young);
  const rows = rounds.map((r) => {
    const s = sends.find((x) => x.arrived >= r.sent - 1 && x.arrived <= r.answered);
    const first = s?.statements[0]?.start ?? s?.finished ?? NaN;
    const last = s ? Math.max(first, ...s.statements.map((q) => q.end)) : NaN;
    const overlapping = young.filter((g) => g.at + g.ms >= r.sent && g.at <= r.delivered);
    return {
      total: r.delivered - r.sent,
      toServer: (s?.arrived ?? NaN) - r.sent,
      beforeSql: first - (s?.arrived ?? NaN),
      sql: last - first,
      afterSql: (s?.finished ?? NaN) - last,
      back: r.answered - (s?.finished ?? NaN),
      cpu: s?.cpuMs ?? NaN,
      gc: overlapping.map((g) => g.ms.toFixed(1)).join('+'),
      statements: s?.statements.map((q) => `${(q.end - q.start).toFixed(2)} ${q.sql}`) ?? [],
    };
  });
  const pct = (xs: number[], p: number) => {
    const v = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
    return v.length ? v[Math.min(v.length - 1, Math.ceil((p / 100) * v.length) - 1)]! : NaN;
  };
  const f = (x: number) => x.toFixed(2);
  const totals = rows.map((r) => r.total);
  console.log(
    `${rows.length} deliveries after ${WARMUP}: p50 ${f(pct(totals, 50))} ms, p99 ${f(pct(totals, 99))} ms, max ${f(pct(totals, 100))} ms`,
  );
  type Row = (typeof rows)[number];
  const median = (phase: (r: Row) => number) => f(pct(rows.map(phase), 50));
  const phases = [
    ['to server', (r: Row) => r.toServer],
    ['before the first statement', (r: Row) => r.beforeSql],
    ['statements', (r: Row) => r.sql],
    ['after them', (r: Row) => r.afterSql],
    ['answer back to A', (r: Row) => r.back],
    ['server CPU per send', (r: Row) => r.cpu],
  ] as const;
  console.log(`median phases (ms): ${phases.map(([name, phase]) => `${name} ${median(phase)}`).join(', ')}`);
  console.log(
    `young collections: ${young.length} in the run (median ${f(
      pct(
        young.map((g) => g.ms),
        50,
      ),
    )} ms), overlapping ${rows.filter((r) => r.gc).length} deliveries; ` +
      `${gcs.length - young.length} other collections; deliveries over 5 ms: ${rows.filter((r) => r.total > 5).length}`,
  );
  console.log(`\nslowest ${SLOWEST} (ms): total | to server | before SQL | SQL | after SQL | back to A | server CPU | young GC`);
  for (const r of [...rows].sort((a, b) => b.total - a.total).slice(0, SLOWEST)) {
    console.log(
      `${f(r.total)} | ${f(r.toServer)} | ${f(r.beforeSql)} | ${f(r.sql)} | ${f(r.afterSql)} | ${f(r.back)} | ${f(r.cpu)} | ${r.gc || '-'}` +
        (r.statements.length ? `\n    ${r.statements.join('\n    ')}` : ''),
    );
  }
}

(process.argv[2] === 'serve' ? serve() : drive()).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
