/**
 * Where one request's time goes: runs Parley in this process on the
 * benchmark dataset, sends each scenario's request (after a few warm-up
 * requests) and prints every SQL statement it issued with its time, then the
 * plan (EXPLAIN) of the slowest ones. Same environment as bench/run.ts
 * (BENCH_SCALE, BENCH_DB, BENCH_MYSQL_URL, BENCH_ONLY); the dataset must exist.
 *
 *   node dist/bench/trace.js            (BENCH_TRACE_PLANS=3: plans per scenario)
 */
import http from 'node:http';
import pino from 'pino';
import { listen, startContext } from '../src/server';
import { channelMembers, readCredentials, readManifest, removePosted, resolveTarget } from './lib/dataset';
import { basic, request } from './lib/http';
import { inProcessConfig } from './lib/in-process';
import { scenarios } from './lib/scenarios';
import { runMain } from './lib/run-main';

interface Traced {
  sql: string;
  bindings: unknown[];
  ms: number;
}

async function main(): Promise<void> {
  const target = resolveTarget();
  const manifest = readManifest(target);
  if (!manifest)
    throw new Error(`no dataset for ${target.scale.name} on ${target.db}: run make bench (or node dist/bench/generate.js) first`);
  const creds = readCredentials(target);
  const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
  const plans = Number(process.env.BENCH_TRACE_PLANS ?? 3);
  const config = inProcessConfig(target);
  const ctx = await startContext(config);
  const server = await listen(ctx, pino({ level: 'silent' }));
  const port = (server.address() as { port: number }).port;
  const db = ctx.db;
  const started = new Map<string, bigint>();
  let log: Traced[] | null = null;
  db.on('query', (q: { __knexQueryUid?: string; sql: string; bindings?: unknown[] }) => {
    if (q.__knexQueryUid !== undefined) started.set(q.__knexQueryUid, process.hrtime.bigint());
    // A transaction's own statements (COMMIT, on MySQL with the writes it held:
    // src/db/mysql/pipelined-client.ts) have no runner, so no response event: listed, not timed.
    else if (log) log.push({ sql: q.sql, bindings: q.bindings ?? [], ms: NaN });
  });
  db.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string; bindings: unknown[] }) => {
    const t0 = started.get(q.__knexQueryUid);
    started.delete(q.__knexQueryUid);
    if (log && t0 !== undefined) log.push({ sql: q.sql, bindings: q.bindings ?? [], ms: Number(process.hrtime.bigint() - t0) / 1e6 });
  });
  const agent = new http.Agent({ keepAlive: true });
  try {
    // The same users as bench/run.ts: some scenarios pick theirs among the 100-subscriber channel's members.
    for (const s of scenarios(manifest, creds, await channelMembers(target, manifest.targets.channel100.id))) {
      if (only && !only.has(s.key)) continue;
      const auth = s.user ? basic(s.user) : null;
      for (let i = 0; i < 3; i++) await request(agent, port, s.method, s.path, auth, s.form);
      log = [];
      const r = await request(agent, port, s.method, s.path, auth, s.form);
      const traced = log;
      log = null;
      const sqlMs = traced.reduce((a, q) => a + (Number.isNaN(q.ms) ? 0 : q.ms), 0);
      process.stdout.write(
        `\n## ${s.title}\nHTTP ${r.status} in ${r.ms.toFixed(1)} ms; ${traced.length} packets, ${sqlMs.toFixed(1)} ms in the database driver (timed ones)\n`,
      );
      for (const q of traced) {
        const ms = Number.isNaN(q.ms) ? 'untimed' : `${q.ms.toFixed(2)} ms`;
        process.stdout.write(`  ${ms.padStart(11)}  ${q.sql.replace(/\s+/g, ' ').slice(0, 220)}\n`);
      }
      for (const q of [...traced].sort((a, b) => b.ms - a.ms).slice(0, plans)) {
        if (!/^\s*select/i.test(q.sql)) continue;
        const explain = target.db === 'sqlite' ? `EXPLAIN QUERY PLAN ${q.sql}` : `EXPLAIN ${q.sql}`;
        const res = await db.raw(explain, q.bindings as never);
        const rows = (target.db === 'sqlite' ? res : res[0]) as Array<Record<string, unknown>>;
        process.stdout.write(`  plan of the ${q.ms.toFixed(2)} ms statement (bindings ${JSON.stringify(q.bindings).slice(0, 120)}):\n`);
        for (const row of rows) {
          process.stdout.write(
            target.db === 'sqlite'
              ? `    ${row.detail}\n`
              : `    ${row.table} type=${row.type} key=${row.key} rows=${row.rows} ${row.Extra ?? ''}\n`,
          );
        }
      }
    }
  } finally {
    agent.destroy();
    server.close();
    ctx.queues.close();
    await db.destroy();
    await removePosted(target, manifest);
  }
}

runMain(main);
