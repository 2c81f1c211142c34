/**
 * One-shot measurement of POST /user_uploads: starts Parley as its own
 * process (dist/src/main.js) on a fresh data directory with the demo
 * organization (SQLite; BENCH_UPLOAD_DATABASE_URL for MariaDB), then
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

const MB = Number(process.env.BENCH_UPLOAD_MB ?? 10);
const CONCURRENCY = Number(process.env.BENCH_UPLOAD_CONCURRENCY ?? 4);
const FILES = Number(process.env.BENCH_UPLOAD_FILES ?? 40);
const FILE_BYTES = MB * 1000 * 1000;

interface Started {
  child: ChildProcess;
  port: number;
  email: string;
  apiKey: string;
}

async function startServer(dataDir: string): Promise<Started> {
  const main = path.join(__dirname, '..', 'src', 'main.js');
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: process.env.BENCH_UPLOAD_DATABASE_URL ?? '',
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
      const email = /Owner email:\s+(\S+)/.exec(out);
      const key = /Owner API key:\s+(\S+)/.exec(out);
      if (port && email && key) resolve({ child, port: Number(port[1]), email: email[1]!, apiKey: key[1]! });
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

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-uploads-'));
  const s = await startServer(dataDir);
  try {
    // One small upload first: the route, the database and the directories are warm.
    await uploadOne(s, 'warmup.bin').catch(() => undefined);
    const atRest = memoryOf(s.child.pid!);
    let next = 0;
    const latencies: number[] = [];
    const urls: string[] = [];
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        while (next < FILES) {
          const i = next++;
          const r = await uploadOne(s, `bench-${worker}-${i}.bin`);
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
      `POST /user_uploads: ${FILES} files of ${MB} MB, ${CONCURRENCY} concurrent, ${process.env.BENCH_UPLOAD_DATABASE_URL ? 'MariaDB' : 'SQLite'}`,
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

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
