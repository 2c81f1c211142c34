import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import fs from 'node:fs';
import { parseZuliprc } from '../../src/cli/zuliprc';
import http from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { ContractChecker } from './contract';
import { encodeFields } from './server';

const ROOT = path.join(__dirname, '..', '..');

/** Parley running as its own process (src/main.ts), as `make run` starts it. */
export interface ServerProcess {
  /** http://127.0.0.1:<port>, the port the kernel chose (PORT=0). */
  url: string;
  pid: number;
  /** The owner's credentials, as main.ts prints them. */
  owner: { email: string; apiKey: string };
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGKILL: no shutdown code runs. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM, the graceful stop; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Settings for a server process: DATA_DIR always, and any other of src/config/settings.ts. */
export type ServerEnv = { DATA_DIR: string; DATABASE_URL?: string; [setting: string]: string | undefined };

/**
 * `node src/main.ts` (compiled on load by test/support/register-ts.js) on
 * 127.0.0.1 with a port of the kernel's choosing, SQLite in DATA_DIR unless
 * `env` names a database, its stdout and stderr piped.
 */
export function spawnServer(env: ServerEnv): ChildProcessByStdio<null, Readable, Readable> {
  // The address it prints and writes to the zuliprc is its own (no EXTERNAL_URL from our environment).
  const inherited = { ...process.env };
  delete inherited.EXTERNAL_URL;
  return spawn(
    process.execPath,
    ['--enable-source-maps', '-r', path.join(ROOT, 'test', 'support', 'register-ts.js'), path.join(ROOT, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: { ...inherited, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '', RATE_LIMITS: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

/** Runs a start that must end by itself (a failed start): its exit status and everything it wrote. Killed after `timeoutMs`. */
export function runServerToExit(env: ServerEnv, timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnServer(env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/**
 * Starts the server process (spawnServer) and resolves once it has printed
 * where it listens and the owner's credentials.
 */
export function startServerProcess(env: ServerEnv, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawnServer(env);
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`Parley did not start: ${why}\n--- its output ---\n${out}`));
    };
    const timer = setTimeout(() => fail(`nothing after ${timeoutMs} ms`), timeoutMs);
    const onExit = (code: number | null, signal: string | null) => fail(`exited (${code ?? signal})`);
    child.once('exit', onExit);
    child.once('error', (err) => fail(err.message));
    child.stdout.on('data', () => {
      const url = /Parley is listening on (http:\/\/\S+:\d+)/.exec(out)?.[1];
      // The API key is printed only when the organization is created: the zuliprc always holds it.
      const zuliprc = /^zuliprc:\s+(\S+)/m.exec(out)?.[1];
      if (!url || !zuliprc) return;
      const { email, key: apiKey } = parseZuliprc(fs.readFileSync(zuliprc, 'utf8'));
      if (!email || !apiKey) return fail(`no credentials in ${zuliprc}`);
      clearTimeout(timer);
      child.removeListener('exit', onExit);
      resolve(handle(child, exited, url, { email, apiKey }, () => out));
    });
  });
}

function handle(
  child: ChildProcess,
  exited: Promise<number | null>,
  url: string,
  owner: ServerProcess['owner'],
  output: () => string,
): ServerProcess {
  const signal = (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    return exited;
  };
  return {
    url,
    pid: child.pid!,
    owner,
    output,
    kill: async () => {
      await signal('SIGKILL');
    },
    stop: async () => {
      // The server bounds its own stop (SHUTDOWN_TIMEOUT_MS, 10 s by default, for requests in
      // flight); one still running well past that is a failure to show, with what it printed.
      let forced = false;
      const timer = setTimeout(() => ((forced = true), child.kill('SIGKILL')), 30_000);
      const code = await signal('SIGTERM');
      clearTimeout(timer);
      if (forced) throw new Error(`Parley did not exit within 30 s of SIGTERM\n--- its output ---\n${output()}`);
      // Its SIGTERM handler always exits with a code: death by a signal is a crash, or a
      // SIGTERM that came before the handler was there.
      if (code === null) throw new Error(`Parley was ended by ${child.signalCode} after SIGTERM\n--- its output ---\n${output()}`);
      return code;
    },
  };
}

/** The request got no complete response: the server died (or was killed) before answering it. */
export class NoResponseError extends Error {}

export interface HttpResponse {
  status: number;
  body: Record<string, any>;
}

/**
 * A plain HTTP client for a server process, every response checked against
 * the contract. It never retries: a POST repeated by the client could itself
 * make a duplicate, and the crash test must see exactly what the server did.
 * A request that gets no complete response rejects with NoResponseError.
 */
export class ProcessClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  constructor(
    readonly baseUrl: string,
    private readonly contract: ContractChecker,
  ) {}

  call(
    method: 'GET' | 'POST',
    path: string,
    auth: { email: string; apiKey: string } | null,
    fields: Record<string, unknown> = {},
  ): Promise<HttpResponse> {
    const form = new URLSearchParams(encodeFields(fields)).toString();
    const target = `/api/v1${path}${method === 'GET' && form ? `?${form}` : ''}`;
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.email}:${auth.apiKey}`).toString('base64')}`;
    if (method !== 'GET') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['content-length'] = String(Buffer.byteLength(form));
    }
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(target, this.baseUrl), { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new NoResponseError(`${method} ${path}: ${err.message}`)));
        res.on('close', () => reject(new NoResponseError(`${method} ${path}: connection closed mid-response`))); // no-op once resolved
        res.on('end', () => {
          if (!res.complete) return reject(new NoResponseError(`${method} ${path}: response cut short`));
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
            this.contract.check(method.toLowerCase(), target, res.statusCode!, body);
            resolve({ status: res.statusCode!, body });
          } catch (err) {
            reject(err);
          }
        });
      });
      req.on('error', (err) => reject(new NoResponseError(`${method} ${path}: ${err.message}`)));
      if (method !== 'GET') req.write(form);
      req.end();
    });
  }

  /** Closes the kept-alive sockets. */
  close(): void {
    this.agent.destroy();
  }
}
