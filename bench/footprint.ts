/**
 * Memory of a small installation (`make footprint`): how much resident
 * memory Parley and its database hold when idle, in the two ways a small
 * organization runs it.
 *
 * 1. `make run`: Parley alone on SQLite with its demo organization, as a
 *    first start leaves it.
 * 2. Parley on a MariaDB of its own, started with scripts/mariadb-small.cnf
 *    (the configuration docs/deployment.md gives for up to about 1,000
 *    users), in a scratch directory on its own port.
 *
 * Each is measured idle after start, and again idle after a little use
 * (registering, reading and sending as the demo owner), which is what
 * fills the pools and caches a server keeps: resident memory (VmRSS) after
 * FOOTPRINT_IDLE_S seconds without requests (default 20), and the peak
 * (VmHWM). Writes bench/results/<date>-footprint.md.
 *
 *   npx tsc -p bench/tsconfig.json && node dist/bench/footprint.js
 */
import { freshResultBase } from './lib/result-file';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseZuliprc } from '../src/cli/zuliprc';
import { startBenchServer, type BenchServer } from './lib/server-process';
import { runMain } from './lib/run-main';

const IDLE_S = Number(process.env.FOOTPRINT_IDLE_S ?? 20);
const MARIADB_PORT = Number(process.env.FOOTPRINT_MARIADB_PORT ?? 3327);
const ROOT = path.join(__dirname, '..', '..');

interface Memory {
  rssMiB: number;
  peakMiB: number;
}

function memoryOf(pid: number): Memory {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A little of what a user's app does: register, a page of messages, the topic list, sends. */
async function use(server: BenchServer, dataDir: string): Promise<number> {
  const rc = parseZuliprc(fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'));
  const auth = 'Basic ' + Buffer.from(`${rc.email}:${rc.key}`).toString('base64');
  const base = `http://127.0.0.1:${server.port}/api/v1`;
  const call = async (method: string, p: string, form?: Record<string, string>) => {
    const res = await fetch(base + p, {
      method,
      headers: { authorization: auth, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res.json() as Promise<Record<string, any>>;
  };
  let requests = 0;
  const reg = await call('POST', '/register', {});
  requests++;
  const channel = (reg.subscriptions as Array<{ name: string; stream_id: number }>)[0]!;
  for (let i = 0; i < 100; i++) {
    await call('POST', '/messages', {
      type: 'stream',
      to: channel.name,
      topic: `footprint ${i % 10}`,
      content: `message ${i} of the footprint run`,
    });
    await call('GET', `/messages?anchor=newest&num_before=100&num_after=0&narrow=${encodeURIComponent('[]')}`);
    await call('GET', `/users/me/${channel.stream_id}/topics`);
    requests += 3;
  }
  return requests;
}

interface Sample {
  label: string;
  parley: Memory | null;
  database: Memory | null;
}

async function idleThenSample(label: string, parleyPid: number | null, dbPid: number | null): Promise<Sample> {
  await sleep(IDLE_S * 1000);
  return { label, parley: parleyPid === null ? null : memoryOf(parleyPid), database: dbPid === null ? null : memoryOf(dbPid) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

async function measureSqlite(): Promise<Sample[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-footprint-'));
  // As `make run` starts it: its own defaults (the bench helper only turns rate limits off).
  const server = await startBenchServer({ dataDir, databaseUrl: '' });
  try {
    const out = [await idleThenSample('make run (SQLite, demo organization), idle after start', server.child.pid!, null)];
    const n = await use(server, dataDir);
    out.push(await idleThenSample(`the same, idle after ${n} requests`, server.child.pid!, null));
    return out;
  } finally {
    await stop(server.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A private mariadbd with scripts/mariadb-small.cnf, in a scratch directory; its pid and socket. */
async function startSmallMariadb(dir: string): Promise<{ child: ChildProcess; socket: string }> {
  const data = path.join(dir, 'data');
  fs.mkdirSync(data, { recursive: true });
  const install = spawnSync(
    'mariadb-install-db',
    ['--no-defaults', '--user=root', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db'],
    { encoding: 'utf8' },
  );
  if (install.status !== 0) throw new Error(`mariadb-install-db: ${install.stderr.slice(-500)}`);
  const socket = path.join(dir, 'mysqld.sock');
  const child = spawn(
    'mariadbd',
    [
      `--defaults-file=${path.join(ROOT, 'scripts', 'mariadb-small.cnf')}`,
      '--user=root',
      `--datadir=${data}`,
      `--socket=${socket}`,
      `--port=${MARIADB_PORT}`,
      '--bind-address=127.0.0.1',
      `--log-error=${path.join(dir, 'error.log')}`,
      `--pid-file=${path.join(dir, 'mariadbd.pid')}`,
    ],
    { stdio: 'ignore' },
  );
  try {
    let up = false;
    for (let i = 0; i < 300 && !up; i++) {
      up = spawnSync('mariadb-admin', ['--no-defaults', `--socket=${socket}`, '-uroot', 'ping'], { encoding: 'utf8' }).status === 0;
      if (child.exitCode !== null) throw new Error(`mariadbd exited: ${fs.readFileSync(path.join(dir, 'error.log'), 'utf8').slice(-800)}`);
      if (!up) await sleep(100);
    }
    if (!up) throw new Error('mariadbd did not answer within 30 s');
    const sql = [
      "CREATE USER 'parley'@'localhost' IDENTIFIED BY 'parley'",
      "GRANT ALL PRIVILEGES ON parley.* TO 'parley'@'localhost'",
      'CREATE DATABASE parley CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci',
    ].join(';');
    const created = spawnSync('mariadb', ['--no-defaults', `--socket=${socket}`, '-uroot', '-e', sql], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`mariadb: ${created.stderr}`);
    return { child, socket };
  } catch (err) {
    await stop(child);
    throw err;
  }
}

async function measureMariadb(): Promise<Sample[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-footprint-db-'));
  const dataDir = path.join(dir, 'parley');
  const db = await startSmallMariadb(dir).catch((err: unknown) => {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  try {
    const out = [await idleThenSample('MariaDB (scripts/mariadb-small.cnf) alone, idle after start', null, db.child.pid!)];
    const server = await startBenchServer({
      dataDir,
      databaseUrl: `mysql://parley:parley@localhost/parley?socket=${db.socket}`,
    });
    try {
      out.push(await idleThenSample('Parley on it (demo organization), idle after start', server.child.pid!, db.child.pid!));
      const n = await use(server, dataDir);
      out.push(await idleThenSample(`the same, idle after ${n} requests`, server.child.pid!, db.child.pid!));
    } finally {
      await stop(server.child);
    }
    return out;
  } finally {
    await stop(db.child);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const mib = (m: Memory | null) => (m === null ? '–' : `${m.rssMiB.toFixed(0)} (peak ${m.peakMiB.toFixed(0)})`);

async function main(): Promise<void> {
  const started = new Date();
  const samples = [...(await measureSqlite()), ...(await measureMariadb())];
  const version = spawnSync('mariadbd', ['--version'], { encoding: 'utf8' }).stdout.trim();
  const lines = [
    `# Footprint, ${started.toISOString().slice(0, 10)}`,
    '',
    `Resident memory (VmRSS, MiB) after ${IDLE_S} s without requests, and the peak (VmHWM). Node ${process.version}; ${version};`,
    `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB. Produced by \`make footprint\` (bench/footprint.ts).`,
    '',
    '| state | Parley | MariaDB | together |',
    '|---|---:|---:|---:|',
    ...samples.map(
      (s) => `| ${s.label} | ${mib(s.parley)} | ${mib(s.database)} | ${((s.parley?.rssMiB ?? 0) + (s.database?.rssMiB ?? 0)).toFixed(0)} |`,
    ),
    '',
  ];
  const md = lines.join('\n');
  process.stdout.write(md);
  const dir = path.join(ROOT, 'bench', 'results');
  fs.writeFileSync(`${freshResultBase(dir, started, 'footprint')}.md`, md);
}

runMain(main);
