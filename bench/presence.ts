/**
 * One-shot measurement of POST /users/me/presence, the request every open
 * client sends once a minute: an organization of BENCH_PRESENCE_USERS users
 * (default 1,000) on a fresh database (SQLite in a temporary directory;
 * BENCH_PRESENCE_DATABASE_URL for MariaDB), served in this process on
 * 127.0.0.1 so that every SQL statement can be counted. Each user pings,
 * BENCH_PRESENCE_CONCURRENCY at a time (default 50), in three rounds:
 * 1. first report (each user's row is created, and an event published);
 * 2. again at once: within 55 s of the last write, so nothing is written;
 * 3. a minute later (the server's clock is moved by hand): every row is
 *    rewritten, as in the steady state of clients pinging every minute.
 * Pings are modern polls (last_update_id, as the apps send it: each answer
 * holds only what changed since the user's previous poll). Prints pings/s,
 * latency p50/p99 and SQL statements per ping (authentication included),
 * reads and writes apart.
 *
 *   npx tsc -p bench/tsconfig.json && node dist/bench/presence.js
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx } from '../src/actions/users';
import { buildApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createDb } from '../src/db/connection';
import { migrateLatest } from '../src/db/migrate';
import { inTransaction } from '../src/db/transaction';
import type { Clock } from '../src/events/clock';
import { loadSpec } from '../src/http/spec';
import { createHttpServer } from '../src/http/transport';
import type { UserRow } from '../src/queries/rows';
import { runMain } from './lib/run-main';

const USERS = Number(process.env.BENCH_PRESENCE_USERS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_PRESENCE_CONCURRENCY ?? 50);

/** The server's clock, moved by hand between rounds. */
class BenchClock implements Clock {
  time = Date.now();
  now = () => this.time;
  schedule(fn: () => void, ms: number) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function ping(port: number, user: UserRow, lastUpdateId: number): Promise<{ ms: number; lastUpdateId: number }> {
  const body = `status=active&new_user_input=true&last_update_id=${lastUpdateId}`;
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        agent,
        method: 'POST',
        path: '/api/v1/users/me/presence',
        auth: `${user.email}:${user.api_key}`,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`ping failed (${res.statusCode}): ${text}`));
          const parsed = JSON.parse(text) as { presence_last_update_id: number };
          resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, lastUpdateId: parsed.presence_last_update_id });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-presence-'));
  const config = { ...loadConfig({}), dataDir, databaseUrl: process.env.BENCH_PRESENCE_DATABASE_URL || null, host: '127.0.0.1' };
  const db = createDb(config);
  await migrateLatest(db);
  const clock = new BenchClock();
  const ctx = createContext(db, config, undefined, undefined, clock);
  const realmId = await doCreateRealm(db, { stringId: '', name: 'Presence bench' });
  const users: UserRow[] = [];
  await inTransaction(db, async (tx) => {
    for (let i = 0; i < USERS; i++) {
      users.push(await createUserInTx(tx, null, { realmId, email: `user${i}@example.com`, fullName: `User ${i}` }));
    }
  });
  const server = createHttpServer(buildApp({ ctx, spec: await loadSpec() }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  let reads = 0;
  let writes = 0;
  db.on('query', (q: { sql: string }) => {
    if (/^\s*(insert|update|delete|replace)\b/i.test(q.sql)) writes++;
    else if (!/^\s*(begin|commit|rollback|savepoint|release)\b/i.test(q.sql)) reads++;
  });
  const lastIds = new Map<number, number>(users.map((u) => [u.id, -1]));

  const round = async (name: string) => {
    reads = 0;
    writes = 0;
    const latencies: number[] = [];
    let next = 0;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < users.length) {
          const user = users[next++]!;
          const r = await ping(port, user, lastIds.get(user.id)!);
          lastIds.set(user.id, r.lastUpdateId);
          latencies.push(r.ms);
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    latencies.sort((a, b) => a - b);
    console.log(
      `| ${name} | ${(users.length / seconds).toFixed(0)} | ${percentile(latencies, 50).toFixed(1)} / ${percentile(latencies, 99).toFixed(1)} | ` +
        `${(reads / users.length).toFixed(2)} | ${(writes / users.length).toFixed(2)} |`,
    );
  };

  console.log(
    `${USERS} users, ${CONCURRENCY} concurrent clients, ${config.databaseUrl ? 'MariaDB' : 'SQLite'}, ${os.cpus().length} cores\n`,
  );
  console.log('| round | pings/s | latency p50 / p99 (ms) | reads per ping | writes per ping |');
  console.log('|---|---|---|---|---|');
  await round('1. first report (row created, event)');
  await round('2. again within 55 s (nothing written)');
  clock.time += 60_000;
  await round('3. a minute later (row rewritten)');
  clock.time += 30_000;
  await round('4. 30 s later (nothing written)');

  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
  ctx.queues.close();
  await db.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

runMain(main);
