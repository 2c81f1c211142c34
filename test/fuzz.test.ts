import { Writable } from 'node:stream';
import fc from 'fast-check';
import pino from 'pino';
import { buildApp } from '../src/app';
import { PENDING_OPERATIONS } from '../src/http/routes';
import { eachDatabase } from './support/databases';
import { snapshotDigest, type TableDigest } from './support/db-snapshot';
import { FuzzRequest, requestArbitrary } from './support/fuzz/generate';
import { operationModels } from './support/fuzz/model';
import { listen, send, type WireResponse } from './support/fuzz/wire';
import { buildWorld, type World } from './support/fuzz/world';
import { startTestServer, type TestServer } from './support/server';
import { tempDataDir } from './support/uploads';

/**
 * Property-based fuzzing of every operation of openapi/ (docs/architecture/testing.md):
 * each generated request is certainly invalid (see test/support/fuzz/generate.ts),
 * so the only right answer is a Zulip error body with a 4xx status, within
 * TIME_LIMIT_MS, leaving the database as it was and the server answering.
 *
 * FUZZ_SEED=n replays a run (the seed of a failure is printed with it);
 * FUZZ_RUNS=n generates n requests per database instead of DEFAULT_REQUESTS;
 * FUZZ_SURVEY=1 sends them all without stopping and prints each failure class.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 17_892_025);
const DEFAULT_REQUESTS = 8000;
const REQUESTS = Number(process.env.FUZZ_RUNS ?? DEFAULT_REQUESTS);
/**
 * The database is compared after each request that issued a write statement,
 * and after every CHECK_EVERY requests whatever they did (with a liveness check).
 */
const CHECK_EVERY = 30;
/**
 * A hang detector, not a speed target (those live in bench/): a request
 * the server never answers fails here. Each answer takes a few
 * milliseconds; 2,000 ms was once exceeded in CI by an answer delayed
 * while other suites loaded the two cores, so the bound leaves room for
 * that and still fails a request that waits for a body or a lock forever.
 */
const TIME_LIMIT_MS = 10_000;

eachDatabase('fuzzing every operation with malformed requests', (dialect) => {
  let t: TestServer;
  const uploadsDir = tempDataDir();
  let world: World;
  let server: Awaited<ReturnType<typeof listen>>;
  /** What the server logged at error level since the last request (the cause of a 500). */
  let serverLog: string[] = [];
  /** Whether the server issued a write statement since the last request (then the database is compared at once). */
  let wrote = false;

  beforeAll(async () => {
    // Uploads the fuzzer sends are refused, but their bytes reach storage first: a real directory.
    t = await startTestServer(dialect, undefined, { dataDir: uploadsDir.dir });
    world = await buildWorld(t);
    const sink = new Writable({ write: (chunk, _enc, done) => (serverLog.push(String(chunk)), done()) });
    server = await listen(buildApp({ ctx: t.ctx, spec: t.spec, log: pino({ level: 'error' }, sink) }));
    t.ctx.db.on('query', (q: { sql?: string }) => {
      if (/^\s*(insert|update|delete|replace)\b/i.test(q.sql ?? '')) wrote = true;
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await t?.close();
    uploadsDir.remove();
  });

  it(`answers each certainly-invalid request with a Zulip 4xx in under ${TIME_LIMIT_MS} ms, changing nothing`, async () => {
    const models = operationModels(t.spec);
    const stats = { sent: 0, statuses: new Map<number, number>(), ms: 0 };
    let baseline = await snapshotDigest(t.ctx.db);

    /** Set when the database stops answering: later runs (shrinking steps) pass, so the request that did it stays the counterexample. */
    let databaseGone = false;
    let sinceCheck = 0;
    const property = fc.asyncProperty(requestArbitrary(models, world), async (req) => {
      if (databaseGone) return;
      serverLog = [];
      wrote = false;
      let failure: Error | null = null;
      let answer = '';
      try {
        const res = await send(server.port, req.wire, TIME_LIMIT_MS).catch((err: Error) => {
          throw new Error(`${req}\n→ no answer: ${err.message}${causes()}`);
        });
        stats.sent++;
        stats.ms += res.ms;
        stats.statuses.set(res.status, (stats.statuses.get(res.status) ?? 0) + 1);
        answer = `${res.status} ${res.text.slice(0, 600)}`;
        const problem = checkAnswer(req, res);
        if (problem) throw new Error(`${req}\n→ ${problem}\n${answer}${causes()}`);
      } catch (err) {
        failure = err as Error;
      }
      const periodic = ++sinceCheck >= CHECK_EVERY;
      if (!wrote && !periodic && !failure) return;
      if (periodic) {
        sinceCheck = 0;
        if (!failure) await checkAlive(server.port).catch((err: Error) => (failure = err));
      }
      // Compared now, failed or not, so that the next run (a shrinking step too) starts from the present state.
      let now: Record<string, TableDigest>;
      try {
        now = await snapshotDigest(t.ctx.db);
      } catch (err) {
        databaseGone = true;
        throw new Error(
          `the database stopped answering (${(err as Error).message}) after:\n${req}${failure ? `\nfirst failure:\n${failure.message}` : ''}`,
          { cause: err },
        );
      }
      const changed = changedTables(baseline, now);
      baseline = now;
      if (!failure && changed.length) {
        // Named at once: replaying the request (shrinking) may change nothing the second time.
        failure = new Error(
          wrote
            ? `${req}\n→ ${answer}\nbut the database changed: ${changed.join(', ')}`
            : `the database changed (${changed.join(', ')}) with no write statement during the last request (a write after an answer?):\n${req}`,
        );
      }
      if (failure) throw failure;
    });

    const started = performance.now();
    await fc.assert(property, { seed: SEED, numRuns: REQUESTS });
    const seconds = (performance.now() - started) / 1000;
    const statuses = [...stats.statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    process.stdout.write(
      `fuzz [${dialect}] seed ${SEED}: ${stats.sent} requests in ${seconds.toFixed(1)} s (${(stats.sent / seconds).toFixed(0)}/s overall, ` +
        `${(stats.ms / Math.max(1, stats.sent)).toFixed(1)} ms each); ${statuses}\n`,
    );
  }, 600_000);

  /**
   * FUZZ_SURVEY=1: instead of stopping at the first failure, send FUZZ_RUNS
   * requests, comparing the database after each that wrote, and print one shortest
   * example per failure class (a development aid for triage).
   */
  if (process.env.FUZZ_SURVEY)
    it('survey of failure classes', async () => {
      const models = operationModels(t.spec);
      const requests = fc.sample(requestArbitrary(models, world), { seed: SEED, numRuns: REQUESTS });
      const classes = new Map<string, { count: number; example: string }>();
      let baseline = await snapshotDigest(t.ctx.db);
      for (const req of requests) {
        serverLog = [];
        wrote = false;
        let problem: string | null;
        let shown: string;
        try {
          const res = await send(server.port, req.wire, TIME_LIMIT_MS);
          problem = checkAnswer(req, res);
          shown = `${res.status} ${res.text.slice(0, 300)}`;
        } catch (err) {
          problem = `no answer: ${(err as Error).message}`;
          shown = '';
        }
        let after: Record<string, TableDigest> = baseline;
        try {
          if (wrote || problem) after = await snapshotDigest(t.ctx.db);
        } catch (err) {
          classes.set(`the database stopped answering: ${(err as Error).message}`, { count: 1, example: `${req}→ ${shown}${causes()}` });
          break;
        }
        const changed = changedTables(baseline, after);
        baseline = after;
        if (changed.length) problem = `${problem ?? ''} database changed: ${changed.join(', ')}`;
        if (!problem) continue;
        const line = causes().split('\n')[2] ?? '';
        const cause = line.includes(' … ') ? `${line.split(':')[0]}: … ${line.slice(-120)}` : line;
        const kind = req.tags[0]!.replace(/:.*$/, '').replace(/ \(.*$/, '');
        const key = cause
          ? `${problem.replace(/\d+ ms/, 'n ms')} | ${cause.trim()}`
          : `${problem.replace(/\d+ ms/, 'n ms')} | ${req.operationId} | ${kind}`;
        const text = `${req}→ ${shown}${causes()}`;
        const known = classes.get(key);
        if (!known) classes.set(key, { count: 1, example: text });
        else {
          known.count++;
          if (text.length < known.example.length) known.example = text;
        }
      }
      const report = [...classes].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `## ${v.count}× ${k}\n${v.example}`);
      process.stdout.write(`fuzz survey [${dialect}]: ${classes.size} classes\n${report.join('\n')}\n`);
    }, 1_800_000);

  function causes(): string {
    const lines = serverLog.map((l) => {
      try {
        const e = JSON.parse(l) as { err?: { message?: string; stack?: string }; msg?: string };
        // SQL errors quote the whole statement: keep its start and the database's message at its end.
        return (e.err?.stack?.split('\n').slice(0, 4) ?? [e.msg ?? l])
          .map((x) => (x.length > 400 ? `${x.slice(0, 200)} … ${x.slice(-200)}` : x))
          .join('\n');
      } catch {
        return l;
      }
    });
    return lines.length ? `\nserver log:\n${lines.join('\n')}` : '';
  }

  function checkAnswer(req: FuzzRequest, res: WireResponse): string | null {
    if (res.ms > TIME_LIMIT_MS) return `answered in ${res.ms.toFixed(0)} ms (limit ${TIME_LIMIT_MS})`;
    let body: Record<string, unknown> | null = null;
    try {
      body = JSON.parse(res.text) as Record<string, unknown>;
    } catch {
      // reported below
    }
    const notBuilt =
      res.status === 501 && body?.code === 'NOT_IMPLEMENTED' && (PENDING_OPERATIONS as readonly string[]).includes(req.operationId);
    if ((res.status < 400 || res.status > 499) && !notBuilt) return `status ${res.status}, expected 4xx`;
    if (!body) return 'the body is not JSON';
    if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) return `Content-Type ${res.headers['content-type']}`;
    if (body.result !== 'error' || typeof body.msg !== 'string' || typeof body.code !== 'string')
      return 'not a Zulip error body {result: "error", msg, code}';
    return null;
  }
});

/** The server still answers a plain request (its event loop and database pool are fine). */
async function checkAlive(port: number): Promise<void> {
  const res = await send(port, { method: 'GET', target: '/api/v1/server_settings', headers: {}, body: null }, TIME_LIMIT_MS).catch(
    (err: Error) => {
      throw new Error(`the server no longer answers GET /api/v1/server_settings: ${err.message}`);
    },
  );
  if (res.status !== 200) throw new Error(`GET /api/v1/server_settings answered ${res.status} ${res.text.slice(0, 300)}`);
}

function changedTables(before: Record<string, TableDigest>, after: Record<string, TableDigest>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .filter((n) => before[n]?.sha256 !== after[n]?.sha256)
    .map((n) => `${n}: ${before[n]?.rows ?? 0} → ${after[n]?.rows ?? 0} rows`);
}
