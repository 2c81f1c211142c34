/**
 * `make bench-cluster` (bench/cluster.sh starts a fresh cluster and runs this): on one cluster,
 * a small dataset made through the API, then
 * - GET /messages (newest 100 of a channel) and POST /messages with autocannon, three ways:
 *   through HAProxy with both Parley nodes; through HAProxy once parley-2 is stopped (HAProxy
 *   routes around it: same database, same proxy, one node); and on parley-1's own port (no
 *   proxy), which shows what HAProxy adds;
 * - event delivery, from the start of a send to the answer of a waiting long-poll: the send and
 *   the poll on the same node, and on two nodes (the event crosses Redis), on the nodes' own ports.
 * Writes bench/results/<date>-cluster.md.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import autocannon from 'autocannon';
import { BENCH_DIR, ROOT } from './lib/dataset';
import { basic, qs, request } from './lib/http';
import { fmtInt } from './lib/progress';

const env = process.env;
const CLUSTER_DIR = path.resolve(env.CLUSTER_DIR ?? 'data/cluster-bench');
const CLUSTER_PORT = Number(env.CLUSTER_PORT ?? 9680);
const STATS_PORT = CLUSTER_PORT + 1;
const nodePort = (i: number) => CLUSTER_PORT + 4 + i;
const DURATION = Number(env.BENCH_DURATION ?? 10);
const WARMUP = Number(env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 16);
const USERS = Number(env.BENCH_CLUSTER_USERS ?? 16);
const MESSAGES = Number(env.BENCH_CLUSTER_MESSAGES ?? 3000);
const EVENT_ROUNDS = Number(env.BENCH_EVENTS ?? 200);
const CHANNEL = 'cluster bench';

interface User {
  email: string;
  api_key: string;
  id: number;
}
const auth = (u: User) => basic({ email: u.email, api_key: u.api_key } as Parameters<typeof basic>[0]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const log = (s: string) => process.stderr.write(`${s}\n`);

async function call(port: number, method: string, route: string, user: User | null, form?: Record<string, string>) {
  const r = await request(agent, port, method, `/api/v1${route}`, user ? auth(user) : null, form);
  if (r.status !== 200) throw new Error(`${method} ${route}: HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

function zuliprcOwner(): { email: string; key: string } {
  const text = fs.readFileSync(path.join(CLUSTER_DIR, 'zuliprc'), 'utf8');
  const field = (name: string) => text.match(new RegExp(`^${name}=(.*)$`, 'm'))![1]!.trim();
  return { email: field('email'), key: field('key') };
}

/** Users, a channel they all belong to, and MESSAGES messages in it, through HAProxy. */
async function makeDataset(): Promise<{ users: User[]; channelId: number; seconds: number }> {
  const t0 = Date.now();
  const o = zuliprcOwner();
  const ownerBody = await call(CLUSTER_PORT, 'POST', '/fetch_api_key', null, { username: o.email, password: 'parley-demo-password' });
  const owner: User = { email: o.email, api_key: o.key, id: ownerBody.user_id };
  const users: User[] = [owner];
  const password = 'cluster-bench-password';
  for (let i = 1; i < USERS; i++) {
    const email = `bench${i}@example.com`;
    await call(CLUSTER_PORT, 'POST', '/users', owner, { email, password, full_name: `Bench User ${i}` });
    const k = await call(CLUSTER_PORT, 'POST', '/fetch_api_key', null, { username: email, password });
    users.push({ email, api_key: k.api_key, id: k.user_id });
  }
  await call(CLUSTER_PORT, 'POST', '/users/me/subscriptions', owner, {
    subscriptions: JSON.stringify([{ name: CHANNEL }]),
    principals: JSON.stringify(users.map((u) => u.id)),
  });
  const channelId = (await call(CLUSTER_PORT, 'GET', `/get_stream_id${qs({ stream: CHANNEL })}`, owner)).stream_id as number;
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < MESSAGES; n = next++) {
      const u = users[n % users.length]!;
      await call(CLUSTER_PORT, 'POST', '/messages', u, {
        type: 'stream',
        to: String(channelId),
        topic: `topic ${n % 20}`,
        content: `message ${n}`,
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { users, channelId, seconds: (Date.now() - t0) / 1000 };
}

interface Row {
  setup: string;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(port: number, method: string, pathAndQuery: string, users: User[], body: string | undefined, seconds: number) {
  let next = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}${pathAndQuery}`,
    // Each connection is another user, as many clients would be.
    setupClient: (client) =>
      client.setHeaders({
        authorization: auth(users[next++ % users.length]!),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      }),
    connections: CONNECTIONS,
    duration: seconds,
    method: method as 'GET' | 'POST',
    body,
    timeout: 30,
  });
}

async function measure(setup: string, port: number, users: User[], channelId: number): Promise<Row[]> {
  const rows: Row[] = [];
  const scenarios = [
    {
      name: 'GET /messages newest 100 (channel)',
      method: 'GET',
      path:
        '/api/v1/messages' + qs({ anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'channel', operand: channelId }] }),
      body: undefined,
    },
    {
      name: 'POST /messages (channel)',
      method: 'POST',
      path: '/api/v1/messages',
      body: new URLSearchParams({ type: 'stream', to: String(channelId), topic: 'load', content: 'load' }).toString(),
    },
  ];
  for (const s of scenarios) {
    if (WARMUP > 0) await load(port, s.method, s.path, users, s.body, WARMUP);
    const r = await load(port, s.method, s.path, users, s.body, DURATION);
    const row = {
      setup,
      scenario: s.name,
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      errors: r.errors + r.timeouts + r.non2xx,
    };
    log(
      `  ${setup}, ${s.name}: ${fmtInt(row.rps)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms${row.errors ? `, ${row.errors} errors` : ''}`,
    );
    rows.push(row);
  }
  return rows;
}

/** From the start of a send on `sendPort` to the answer of the long-poll waiting on `pollPort`. */
async function delivery(sendPort: number, pollPort: number, sender: User, receiver: User, channelId: number): Promise<number[]> {
  const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const b = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    const reg = await request(b, pollPort, 'POST', '/api/v1/register', auth(receiver), { event_types: '["message"]' });
    if (reg.status !== 200) throw new Error(`register: ${reg.status}`);
    const queueId = reg.body.queue_id as string;
    let last = reg.body.last_event_id as number;
    for (let i = 0; i < EVENT_ROUNDS; i++) {
      const content = `delivery ${i} ${Date.now()}`;
      const poll = (async () => {
        for (;;) {
          const r = await request(b, pollPort, 'GET', '/api/v1/events' + qs({ queue_id: queueId, last_event_id: last }), auth(receiver));
          if (r.status !== 200) throw new Error(`GET /events: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          const events = r.body.events as Array<{ id: number; type: string; message?: { content: string } }>;
          if (events.length) last = events[events.length - 1]!.id;
          if (events.some((e) => e.type === 'message' && e.message!.content.includes(content))) return process.hrtime.bigint();
        }
      })();
      // Let the poll reach its node and wait there before the send.
      await new Promise((r) => setTimeout(r, 5));
      const t0 = process.hrtime.bigint();
      const s = await request(a, sendPort, 'POST', '/api/v1/messages', auth(sender), {
        type: 'stream',
        to: String(channelId),
        topic: 'delivery',
        content,
      });
      if (s.status !== 200) throw new Error(`send: ${s.status}`);
      times.push(Number((await poll) - t0) / 1e6);
    }
    await request(b, pollPort, 'DELETE', '/api/v1/events' + qs({ queue_id: queueId }), auth(receiver));
    return times;
  } finally {
    a.destroy();
    b.destroy();
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/** Stops parley-2 (SIGTERM to the PID this cluster recorded) and waits until HAProxy has marked it down. */
async function stopNode2(): Promise<void> {
  const pid = Number(fs.readFileSync(path.join(CLUSTER_DIR, 'pids', 'parley-2.pid'), 'utf8').trim());
  const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  if (!cmdline.includes('dist/src/main.js')) throw new Error(`parley-2: PID ${pid} is not a Parley node`);
  process.kill(pid, 'SIGTERM');
  const alive = () => {
    try {
      return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 300 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive()) throw new Error('parley-2 did not stop in 30 s');
  for (let i = 0; i < 100; i++) {
    const csv = await new Promise<string>((resolve, reject) =>
      http
        .get({ host: '127.0.0.1', port: STATS_PORT, path: '/;csv' }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c));
          res.on('end', () => resolve(text));
        })
        .on('error', reject),
    );
    const line = csv.split('\n').find((l) => l.startsWith('parley,p2,'));
    if (line?.split(',')[17]?.startsWith('DOWN')) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('HAProxy never marked parley-2 down');
}

function gitHead(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim();
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const started = new Date();
  const loadStart = os.loadavg();
  log(`dataset through the API: ${USERS} users, one channel, ${MESSAGES} messages…`);
  const { users, channelId, seconds } = await makeDataset();
  log(`  made in ${seconds.toFixed(1)} s`);

  log('event delivery (nodes’ own ports)…');
  const [a, b] = [users[1]!, users[2]!];
  const same = await delivery(nodePort(1), nodePort(1), a, b, channelId);
  const cross = await delivery(nodePort(1), nodePort(2), a, b, channelId);
  log(
    `  same node p50 ${pct(same, 50).toFixed(1)} ms, p99 ${pct(same, 99).toFixed(1)} ms; across nodes p50 ${pct(cross, 50).toFixed(1)} ms, p99 ${pct(cross, 99).toFixed(1)} ms`,
  );

  log('load…');
  const rows: Row[] = [];
  rows.push(...(await measure('2 nodes through HAProxy', CLUSTER_PORT, users, channelId)));
  await stopNode2();
  rows.push(...(await measure('1 node through HAProxy (parley-2 stopped)', CLUSTER_PORT, users, channelId)));
  rows.push(...(await measure('1 node on its own port (no HAProxy)', nodePort(1), users, channelId)));
  const loadEnd = os.loadavg();

  const date = started.toISOString().slice(0, 10);
  const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const ratio = (scenario: string, setup: string) => {
    const base = rows.find((r) => r.scenario === scenario && r.setup.startsWith('1 node through'))!;
    const r = rows.find((x) => x.scenario === scenario && x.setup === setup)!;
    return r.rps / base.rps;
  };
  const lines = [
    `# Cluster benchmark, ${date}`,
    '',
    '**On this 2-core machine this shows the overhead of the cluster, not its gain.** Two Parley nodes, three Galera',
    'nodes, Redis, HAProxy and the load generator share the same two cores, so a second node adds no CPU: it can only',
    'add the cost of routing and of the event stream. The gain appears when each node has cores of its own. Where two',
    'nodes come out ahead here, it is because one Node.js process runs its JavaScript on one core: a second process',
    'takes CPU from the other core, which the database, Redis, HAProxy and autocannon also need.',
    `Load average at the start: ${loadStart.map((l) => l.toFixed(2)).join(', ')}; at the end: ${loadEnd.map((l) => l.toFixed(2)).join(', ')}.`,
    '',
    '| | |',
    '|---|---|',
    `| machine | ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version} |`,
    `| cluster | \`make cluster\` layout: HAProxy, 2 Parley nodes (EVENT_BUS=redis), 3 Galera nodes (one writer), Redis |`,
    `| code | ${gitHead()} |`,
    `| dataset | made through the API in ${seconds.toFixed(0)} s: ${USERS} users, all in one channel, ${fmtInt(MESSAGES)} messages in 20 topics |`,
    `| load | autocannon, ${CONNECTIONS} connections (each another user), ${DURATION} s after ${WARMUP} s of warm-up |`,
    '',
    '## Requests',
    '',
    '"1 node through HAProxy" is the same cluster with parley-2 stopped (SIGTERM) and marked down by HAProxy\'s health',
    'check: same database, same proxy. "Own port" is parley-1 without HAProxy in front.',
    '',
    '| setup | scenario | req/s | ×1 node | p50 ms | p99 ms | errors |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.setup} | ${r.scenario} | ${fmt(r.rps)} | ${fmt(ratio(r.scenario, r.setup), 2)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.errors} |`,
    ),
    '',
    '## Event delivery',
    '',
    `From the start of POST /messages to the answer of a GET /events waiting for it (${EVENT_ROUNDS} rounds each, one at a time,`,
    "on the nodes' own ports). Across nodes the event goes from parley-1 to Redis and back to parley-2; on one node it",
    'makes the same trip through Redis (every node reads its own events back from the stream), so the difference is',
    "the second node's read.",
    '',
    '| send → poll | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|',
    `| same node (parley-1 → parley-1) | ${fmt(pct(same, 50), 1)} | ${fmt(pct(same, 99), 1)} | ${fmt(Math.max(...same), 1)} |`,
    `| across nodes (parley-1 → parley-2) | ${fmt(pct(cross, 50), 1)} | ${fmt(pct(cross, 99), 1)} | ${fmt(Math.max(...cross), 1)} |`,
    '',
  ];
  const file = path.join(BENCH_DIR, 'results', `${date}-cluster.md`);
  fs.writeFileSync(file, lines.join('\n'));
  log(`wrote ${path.relative(ROOT, file)}`);
  agent.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
