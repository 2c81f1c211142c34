/**
 * What one request allocates: runs Parley in this process on the benchmark
 * dataset, sends a scenario's request (default: POST /messages to the
 * 100-subscriber channel) one at a time, and reports, per request, the bytes
 * V8's sampling heap profiler saw allocated (objects either GC collected
 * included) by package and by function, the young-generation collections
 * and their pauses, and the process's CPU time. The client's own allocations
 * (this file and bench/lib) are counted apart.
 *
 *   node dist/bench/alloc.js      (BENCH_SCALE, BENCH_DB, BENCH_MYSQL_URL as bench/run.ts)
 *   ALLOC_SCENARIO=send  ALLOC_REQUESTS=1000  ALLOC_WARMUP=300  ALLOC_TOP=25
 */
// The server's own V8 flags (ADR 0025): Parley runs in this process.
import '../src/runtime-flags';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import pino from 'pino';
import { listen, startContext } from '../src/server';
import { readCredentials, readManifest, removePosted, resolveTarget } from './lib/dataset';
import { basic, request } from './lib/http';
import { inProcessConfig, sourceOf } from './lib/in-process';
import { scenarios } from './lib/scenarios';
import { runMain } from './lib/run-main';

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}

const env = process.env;
const SCENARIO = env.ALLOC_SCENARIO ?? 'send';
const REQUESTS = Number(env.ALLOC_REQUESTS ?? 1000);
const WARMUP = Number(env.ALLOC_WARMUP ?? 300);
const TOP = Number(env.ALLOC_TOP ?? 25);
/** `1`: only what is still alive after the requests and a full GC (what a request leaves behind). */
const RETAINED = env.ALLOC_RETAINED === '1';
/** `1`: only what no young-generation GC collected (promoted to the old generation, or alive at the end). */
const PROMOTED = env.ALLOC_PROMOTED === '1';

/** A young-generation collection now (V8's gc extension, enabled at run time). */
function youngGc(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as (o: { type: 'minor' }) => void)({ type: 'minor' });
}

async function main(): Promise<void> {
  const target = resolveTarget();
  const manifest = readManifest(target);
  if (!manifest) throw new Error(`no dataset for ${target.scale.name} on ${target.db}: run make bench first`);
  const creds = readCredentials(target);
  const scenario = scenarios(manifest, creds).find((s) => s.key === SCENARIO);
  if (!scenario) throw new Error(`no scenario ${SCENARIO}`);
  const config = inProcessConfig(target, { NODE_ENV: 'production' });
  const ctx = await startContext(config);
  const server = await listen(ctx, pino({ level: 'silent' }));
  const port = (server.address() as { port: number }).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const auth = scenario.user ? basic(scenario.user) : null;
  const send = async () => {
    // With the scenario's headers, as its load sends them (the topic list: gzipped).
    const r = await request(agent, port, scenario.method, scenario.path, auth, scenario.form, scenario.headers);
    if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
  };
  try {
    for (let i = 0; i < WARMUP; i++) await send();

    const gcs: Array<{ kind: number; ms: number }> = [];
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) gcs.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration });
    });
    obs.observe({ entryTypes: ['gc'] });
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < REQUESTS; i++) await send();
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const cpu = process.cpuUsage(cpu0);
    await new Promise((r) => setImmediate(r));
    obs.disconnect();

    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: !RETAINED,
      includeObjectsCollectedByMinorGC: !RETAINED && !PROMOTED,
    });
    for (let i = 0; i < REQUESTS; i++) await send();
    // Without this, the young generation's uncollected garbage (up to a whole
    // scavenge interval of requests) would count as promoted. Two scavenges:
    // the first only moves a young survivor within the young generation.
    if (PROMOTED) for (let i = 0; i < 2; i++) youngGc();
    if (RETAINED) await session.post('HeapProfiler.collectGarbage');
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: SampleNode } };
    session.disconnect();

    const byPackage = new Map<string, number>();
    const byFunction = new Map<string, number>();
    let client = 0;
    const walk = (n: SampleNode, clientStack: boolean) => {
      const pkg = sourceOf(n.callFrame.url);
      const isClient = clientStack || pkg === 'bench';
      if (n.selfSize) {
        if (isClient) client += n.selfSize;
        else {
          byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + n.selfSize);
          const fn = `${n.callFrame.functionName || '(anonymous)'}  ${pkg}:${n.callFrame.lineNumber + 1}`;
          byFunction.set(fn, (byFunction.get(fn) ?? 0) + n.selfSize);
        }
      }
      for (const c of n.children) walk(c, isClient);
    };
    walk(profile.head, false);
    const server = [...byPackage.values()].reduce((a, b) => a + b, 0);
    const kb = (bytes: number) => (bytes / REQUESTS / 1024).toFixed(1).padStart(7);
    const minor = gcs.filter((g) => g.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR);
    const major = gcs.filter((g) => g.kind !== perfConstants.NODE_PERFORMANCE_GC_MINOR);
    const sum = (xs: Array<{ ms: number }>) => xs.reduce((a, g) => a + g.ms, 0);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const out: string[] = [];
    out.push(`## ${scenario.title}: ${REQUESTS} requests one at a time, after ${WARMUP}`);
    out.push('');
    out.push(
      `- wall ${(wallMs / REQUESTS).toFixed(2)} ms per request; process CPU ${((cpu.user + cpu.system) / REQUESTS).toFixed(0)} µs per request (client included)`,
    );
    out.push(
      `- young-generation GCs: ${minor.length} (one per ${(REQUESTS / Math.max(1, minor.length)).toFixed(0)} requests), ` +
        `median pause ${median(minor.map((g) => g.ms)).toFixed(2)} ms, ${((sum(minor) / REQUESTS) * 1000).toFixed(0)} µs per request; ` +
        `other GCs: ${major.length}, ${sum(major).toFixed(1)} ms in all`,
    );
    out.push(
      `- ${RETAINED ? 'still alive after a full GC' : PROMOTED ? 'not collected young' : 'allocated'}: by the server ${kb(server).trim()} KB per request; by the client ${kb(client).trim()} KB`,
    );
    out.push('');
    out.push('| KB per request | package |');
    out.push('|---:|---|');
    for (const [p, b] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, TOP)) out.push(`| ${kb(b)} | ${p} |`);
    out.push('');
    out.push('| KB per request | function |');
    out.push('|---:|---|');
    for (const [f, b] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, TOP)) out.push(`| ${kb(b)} | ${f} |`);
    process.stdout.write(out.join('\n') + '\n');
  } finally {
    agent.destroy();
    server.close();
    ctx.queues.close();
    await ctx.db.destroy();
    await removePosted(target, manifest);
  }
}

runMain(main);
