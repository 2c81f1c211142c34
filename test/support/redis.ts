import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Whether redis-server is installed. Without it the Redis suites skip, loudly, except under CI (where they fail). */
export function redisAvailable(): boolean {
  const found = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!found) {
    if (process.env.CI === 'true') throw new Error('redis-server is not installed: .ci/run installs it (apt-get install redis-server)');
    console.warn('SKIPPED: redis-server is not installed (apt-get install redis-server); the Redis event bus is NOT tested');
  }
  return found;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A redis-server of the test's own, on a free 127.0.0.1 port, in a
 * temporary directory; `stop` and `start` again keep the port and the
 * directory (with `persist`, the append-only file fsynced at every write).
 */
export class TestRedis {
  private child: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly persist: boolean,
  ) {}

  static async start(opts: { persist?: boolean } = {}): Promise<TestRedis> {
    const r = new TestRedis(await freePort(), fs.mkdtempSync(path.join(os.tmpdir(), 'parley-redis-')), opts.persist ?? false);
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ['--bind', '127.0.0.1', '--port', String(this.port), '--dir', this.dir, '--save', ''];
    args.push('--appendonly', this.persist ? 'yes' : 'no', '--appendfsync', 'always');
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}): ${out}`));
      });
    });
  }

  /** SIGTERM, and wait for the process to be gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    this.child = null;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await gone;
  }

  async destroy(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
