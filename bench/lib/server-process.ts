import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** Parley running as its own process (dist/src/main.js), for a benchmark to measure from outside. */
export interface BenchServer {
  child: ChildProcess;
  port: number;
  metricsPort: number;
  /** The inspector's WebSocket URL, when started with `inspect`. */
  debuggerUrl: string | null;
  /** Its last lines of output (errors it logged), for the report when something failed. */
  tail: string[];
}

const TAIL_LINES = 40;

/**
 * Starts dist/src/main.js on 127.0.0.1 with ports of the kernel's choosing
 * for the API and the metrics, rate limits off, and resolves once it has
 * printed both addresses (and, with `inspect`, the inspector's, which is
 * then listening on 127.0.0.1 too). `env` adds or overrides settings;
 * `nodeArgs` go before the script (--cpu-prof …). With `stderr: 'inherit'`
 * its standard error is this process's own.
 */
export function startBenchServer(opts: {
  dataDir: string;
  databaseUrl: string;
  env?: Record<string, string>;
  nodeArgs?: string[];
  inspect?: boolean;
  stderr?: 'pipe' | 'inherit';
}): Promise<BenchServer> {
  const nodeArgs = [...(opts.inspect ? ['--inspect=127.0.0.1:0'] : []), ...(opts.nodeArgs ?? [])];
  const child = spawn(process.execPath, [...nodeArgs, path.join(__dirname, '..', '..', 'src', 'main.js')], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      DATA_DIR: opts.dataDir,
      DATABASE_URL: opts.databaseUrl,
      RATE_LIMITS: 'off',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', opts.stderr ?? 'pipe'],
  });
  const streams = [child.stdout!, ...(child.stderr ? [child.stderr] : [])];
  const tail: string[] = [];
  const keep = (c: Buffer) => {
    for (const line of c.toString().split('\n')) if (line.trim()) tail.push(line.slice(0, 500));
    if (tail.length > TAIL_LINES) tail.splice(0, tail.length - TAIL_LINES);
  };
  let out = '';
  return new Promise<BenchServer>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`server exited (${code}): ${out}`));
    child.once('exit', onExit);
    const look = (c: Buffer) => {
      out += c.toString();
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      const metrics = /Metrics:\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      const ws = /Debugger listening on (ws:\/\/\S+)/.exec(out);
      if (!port || !metrics || (opts.inspect && !ws)) return;
      child.removeListener('exit', onExit);
      // From now on only the last lines are kept, and the pipes never fill.
      for (const s of streams) s.removeListener('data', look).on('data', keep);
      resolve({ child, port: Number(port[1]), metricsPort: Number(metrics[1]), debuggerUrl: ws?.[1] ?? null, tail });
    };
    for (const s of streams) s.on('data', look);
  });
}
