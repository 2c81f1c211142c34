/**
 * What a rate limit costs each API request, per store (docs/adr/0010-rate-limits.md):
 * sequential `consume` calls for distinct users (as requests of many users
 * arrive) on the memory store, the database store on a SQLite file, on
 * MariaDB when BENCH_MYSQL_URL (a server URL whose user may create databases)
 * is set, and on Redis when BENCH_REDIS_URL (redis://host:port) is set.
 * Prints the mean time per call.
 *
 *   npx tsc -p bench && node dist/bench/rate-limits.js
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { createDb } from '../src/db/connection';
import { migrateLatest } from '../src/db/migrate';
import { openRateLimitRedis } from '../src/db/rate-limit-redis';
import { closeRedis } from '../src/events/redis-calls';
import { createRateLimiter } from '../src/db/rate-limit-store';
import type { RateLimitStore } from '../src/domain/rate-limits';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import { runMain } from './lib/run-main';

const CALLS = Number(process.env.BENCH_RATE_LIMIT_CALLS ?? 5000);

async function measure(label: string, store: RateLimitStore, db: Knex, redis: Redis | null = null): Promise<void> {
  const limiter = createRateLimiter(store, { db, redis }, `bench${Date.now()}`, { points: 200, durationSeconds: 60 });
  for (let i = 0; i < 200; i++) await limiter.consume(`warm${i}`);
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await limiter.consume(String(i % 1000));
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(`${label.padEnd(24)} ${(ms / CALLS).toFixed(4)} ms per request (${CALLS} calls, ${ms.toFixed(0)} ms)`);
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-rl-'));
  const sqlite = createDb({ databaseUrl: null, dataDir: dir });
  await migrateLatest(sqlite);
  await measure('memory', 'memory', sqlite);
  await measure('database (SQLite file)', 'database', sqlite);
  const redisUrl = process.env.BENCH_REDIS_URL;
  if (redisUrl) {
    let done = false;
    const redis = openRateLimitRedis({ url: redisUrl, name: 'parley-bench-rl', onError: (err) => done || console.error(err) });
    await new Promise((resolve) => redis.once('ready', resolve));
    await measure('redis', 'redis', sqlite, redis);
    done = true;
    await closeRedis(redis, 1000);
  } else {
    console.log('redis                    not measured: set BENCH_REDIS_URL');
  }
  await sqlite.destroy();
  fs.rmSync(dir, { recursive: true, force: true });

  const server = process.env.BENCH_MYSQL_URL;
  if (!server) return console.log('database (MariaDB)       not measured: set BENCH_MYSQL_URL');
  const name = `parley_bench_rl_${Date.now()}`;
  const admin = knexFactory({ client: 'mysql2', connection: server, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  try {
    const url = new URL(server);
    url.pathname = `/${name}`;
    const mysql = createDb({ databaseUrl: url.toString(), dataDir: dir });
    await migrateLatest(mysql);
    await measure('database (MariaDB)', 'database', mysql);
    await mysql.destroy();
  } finally {
    await admin.raw(`DROP DATABASE \`${name}\``);
    await admin.destroy();
  }
}

runMain(main);
