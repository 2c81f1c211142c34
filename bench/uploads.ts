/**
 * One-shot measurement of uploads, POST /user_uploads (multipart) and
 * resumable uploads (tus: a creation, then one PATCH with the whole file, as
 * tus clients send by default). For each protocol (BENCH_UPLOAD_PROTOCOL:
 * multipart, tus or both, the default) it starts Parley as its own process
 * (dist/src/main.js) on a fresh data directory with the demo organization —
 * SQLite; BENCH_DB=mariadb for a fresh database on BENCH_MYSQL_URL's server
 * (dropped afterwards), or BENCH_UPLOAD_DATABASE_URL for a given one — then
 * BENCH_UPLOAD_CONCURRENCY clients (default 4) each upload files of
 * BENCH_UPLOAD_MB megabytes (default 10) until BENCH_UPLOAD_FILES files
 * (default 40) are stored. Each body is streamed from one reused 64 KiB
 * chunk, so the load generator holds no file in memory. Prints throughput
 * (MB/s of file bytes), latency per upload, and the server's resident memory:
 * at rest before the run, and its peak (VmHWM from /proc, Linux) after it.
 * Finally checks every file is on disk with its size, and removes the
 * directory.
 *
 *   npx tsc -p bench/tsconfig.json && node dist/bench/uploads.js
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseZuliprc } from '../src/cli/zuliprc';
import { createScratchDatabase } from './lib/scratch-database';
import { runMain } from './lib/run-main';

const MB = Number(process.env.BENCH_UPLOAD_MB ?? 10);
const CONCURRENCY = Number(process.env.BENCH_UPLOAD_CONCURRENCY ?? 4);
const FILES = Number(process.env.BENCH_UPLOAD_FILES ?? 40);
const FILE_BYTES = MB * 1000 * 1000;
const PROTOCOLS = (process.env.BENCH_UPLOAD_PROTOCOL ?? 'both') === 'both' ? ['multipart', 'tus'] : [process.env.BENCH_UPLOAD_PROTOCOL!];

/** The database the servers use: SQLite (''), a given URL, or a fresh MariaDB database dropped afterwards. */
async function benchDatabase(): Promise<{ url: string; label: string; drop: () => Promise<void> }> {
  const given = process.env.BENCH_UPLOAD_DATABASE_URL?.trim();
  if (given) return { url: given, label: 'MariaDB', drop: async () => undefined };
  if (process.env.BENCH_DB !== 'mariadb') return { url: '', label: 'SQLite', drop: async () => undefined };
  const raw = process.env.BENCH_MYSQL_URL?.trim();
  if (!raw) throw new Error('BENCH_DB=mariadb needs BENCH_MYSQL_URL (a server URL; a fresh database is made on it)');
  const scratch = await createScratchDatabase(raw, 'parley_bench_uploads');
  return { url: scratch.url, label: 'MariaDB', drop: scratch.drop };
}

interface Started {
  child: ChildProcess;
  port: number;
  email: string;
  apiKey: string;
}

async function startServer(dataDir: string, databaseUrl: string): Promise<Started> {
  const main = path.join(__dirname, '..', 'src', 'main.js');
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      RATE_LIMITS: 'off',
      MAX_FILE_UPLOAD_SIZE_MIB: String(Math.ceil(MB) + 1),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      // The key is printed only when the organization is created; the zuliprc always holds it.
      const zuliprc = /^zuliprc:\s+(\S+)/m.exec(out);
      if (!port || !zuliprc) return;
      const { email, key } = parseZuliprc(fs.readFileSync(zuliprc[1]!, 'utf8'));
      if (email && key) resolve({ child, port: Number(port[1]), email, apiKey: key });
    });
  });
}

/** Resident memory of a process, from /proc: current (VmRSS) and peak (VmHWM), in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return null;
  }
}

const chunk = Buffer.alloc(64 * 1024, 0x5a);

function uploadOne(s: Started, name: string): Promise<{ ms: number; url: string }> {
  const boundary = 'parleybench' + Math.random().toString(16).slice(2);
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port: s.port,
      method: 'POST',
      path: '/api/v1/user_uploads',
      headers: {
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + FILE_BYTES + tail.length),
        Authorization: 'Basic ' + Buffer.from(`${s.email}:${s.apiKey}`).toString('base64'),
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`upload answered ${res.statusCode}: ${text}`));
        resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, url: (JSON.parse(text) as { url: string }).url });
      });
    });
    let sent = 0;
    const write = () => {
      while (sent < FILE_BYTES) {
        const n = Math.min(chunk.length, FILE_BYTES - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', write);
          return;
        }
      }
      req.end(tail);
    };
    req.write(head);
    write();
  });
}

/** A plain request with a body streamed from the reused chunk (`bytes` of it); resolves with the status, headers and text. */
function streamed(
  s: Started,
  method: string,
  target: string,
  headers: Record<string, string>,
  bytes: number,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port: s.port,
      method,
      path: target,
      headers: {
        ...headers,
        'Content-Length': String(bytes),
        Authorization: 'Basic ' + Buffer.from(`${s.email}:${s.apiKey}`).toString('base64'),
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    let sent = 0;
    const write = () => {
      while (sent < bytes) {
        const n = Math.min(chunk.length, bytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', write);
          return;
        }
      }
      req.end();
    };
    write();
  });
}

/** A resumable upload: the creation, then the whole file in one PATCH (whose answer carries the stored file's url). */
async function uploadOneTus(s: Started, name: string): Promise<{ ms: number; url: string }> {
  const t0 = process.hrtime.bigint();
  const created = await streamed(
    s,
    'POST',
    '/api/v1/tus',
    {
      'Tus-Resumable': '1.0.0',
      'Upload-Length': String(FILE_BYTES),
      'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')},filetype ${Buffer.from('application/octet-stream').toString('base64')}`,
    },
    0,
  );
  if (created.status !== 201) throw new Error(`tus creation answered ${created.status}: ${created.text}`);
  const done = await streamed(
    s,
    'PATCH',
    String(created.headers.location),
    { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    FILE_BYTES,
  );
  if (done.status !== 200) throw new Error(`tus PATCH answered ${done.status}: ${done.text}`);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, url: (JSON.parse(done.text) as { url: string }).url };
}

async function main(): Promise<void> {
  const database = await benchDatabase();
  try {
    for (const protocol of PROTOCOLS) await runOne(protocol, database);
  } finally {
    await database.drop();
  }
}

async function runOne(protocol: string, database: { url: string; label: string }): Promise<void> {
  const upload = protocol === 'tus' ? uploadOneTus : uploadOne;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-uploads-'));
  const s = await startServer(dataDir, database.url);
  try {
    // One small upload first: the route, the database and the directories are warm.
    await upload(s, 'warmup.bin').catch(() => undefined);
    const atRest = memoryOf(s.child.pid!);
    let next = 0;
    const latencies: number[] = [];
    const urls: string[] = [];
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        while (next < FILES) {
          const i = next++;
          const r = await upload(s, `bench-${worker}-${i}.bin`);
          latencies.push(r.ms);
          urls.push(r.url);
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const after = memoryOf(s.child.pid!);
    for (const url of urls) {
      const size = fs.statSync(path.join(dataDir, 'uploads', url.slice('/user_uploads/'.length))).size;
      if (size !== FILE_BYTES) throw new Error(`${url} has ${size} bytes on disk`);
    }
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(0);
    const mib = (b: number | undefined) => (b === undefined || Number.isNaN(b) ? 'n/a' : `${(b / 1048576).toFixed(1)} MiB`);
    const lines = [
      `${protocol === 'tus' ? 'tus (POST /api/v1/tus + one PATCH)' : 'POST /user_uploads'}: ${FILES} files of ${MB} MB, ${CONCURRENCY} concurrent, ${database.label}`,
      `  wall time         ${seconds.toFixed(2)} s`,
      `  throughput        ${((FILES * FILE_BYTES) / 1e6 / seconds).toFixed(1)} MB/s (${(FILES / seconds).toFixed(2)} uploads/s)`,
      `  latency p50/p99   ${pct(50)} / ${pct(99)} ms`,
      `  server RSS        ${mib(atRest?.rss)} at rest; peak ${mib(after?.peak)} (VmHWM), ${mib(after?.rss)} after`,
      `  files on disk     ${urls.length}, each ${FILE_BYTES} bytes`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
