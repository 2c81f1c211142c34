import net from 'node:net';

/**
 * An open-loop load at a fixed rate: request k is due at start + k / rate,
 * whatever happened to the ones before it. Each connection carries one
 * request at a time; a request due while every connection is busy waits for
 * the first free one, and its latency counts from when it was due, so a slow
 * server cannot hide its queue (no coordinated omission).
 *
 * Why not autocannon's `overallRate`: autocannon gives each connection a
 * budget per second and sends back to back until it is spent, then idles
 * until the next second. At 500/s on a server that answers 700/s, that is
 * saturation for most of each second, not 500/s. Its correction for
 * coordinated omission also takes the expected interval as ceil(1 / rate)
 * = 1 ms, so a 40 ms answer is recorded with 39 synthetic samples below it:
 * the percentiles it reports are weighted by latency.
 *
 * Requests go over raw sockets with their bytes built once, and answers are
 * read only as far as their status and length: the generator shares the
 * machine with the server, so it should cost little.
 */
export interface PacedLoad {
  port: number;
  method: string;
  path: string;
  /** Headers of every request; `authorization` per connection from `auth` when given. */
  headers: Record<string, string>;
  body?: string;
  /** One Authorization value per connection, in turn (several users). */
  auth?: string[];
  connections: number;
  rate: number;
  /** Seconds of requests due; every answer to them is counted (a warm-up is a run of its own). */
  seconds: number;
}

export interface PacedResult {
  /** Answers received. */
  completed: number;
  /** Of those, answers other than 2xx, plus requests never answered. */
  errors: number;
  statusCodes: Record<number, number>;
  /** Milliseconds from each counted request's due time to its complete answer, ascending. */
  latencies: number[];
  /** Counted answers per second of the measured window. */
  rps: number;
}

/** How long, after the last request was due, answers are still awaited. */
const DRAIN_MS = 30_000;

export async function runPaced(load: PacedLoad): Promise<PacedResult> {
  const sockets = await Promise.all(
    Array.from({ length: load.connections }, (_, i) => openConnection(load, load.auth?.[i % load.auth.length])),
  );
  const start = performance.now();
  const total = Math.round(load.rate * load.seconds);
  const result: PacedResult = { completed: 0, errors: 0, statusCodes: {}, latencies: [], rps: 0 };
  const waiting: number[] = []; // due times of requests no connection has taken yet
  const idle = [...sockets];
  let scheduled = 0;
  let outstanding = 0;
  let finished: () => void = () => {};
  const allDone = new Promise<void>((resolve) => (finished = resolve));

  const dispatch = () => {
    while (idle.length && waiting.length) {
      // The connection idle longest: connections (and their users) take turns.
      const conn = idle.shift()!;
      const due = waiting.shift()!;
      conn.send((status) => {
        outstanding--;
        result.statusCodes[status] = (result.statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) result.latencies.push(performance.now() - due);
        else result.errors++;
        idle.push(conn);
        dispatch();
        if (scheduled === total && outstanding === 0) finished();
      });
    }
  };
  const tick = () => {
    const now = performance.now();
    while (scheduled < total && start + (scheduled * 1000) / load.rate <= now) {
      waiting.push(start + (scheduled * 1000) / load.rate);
      scheduled++;
      outstanding++;
    }
    dispatch();
    if (scheduled < total) setTimeout(tick, 1);
  };
  tick();
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    allDone.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), load.seconds * 1000 + DRAIN_MS))),
  ]);
  clearTimeout(timer);
  if (!drained) result.errors += outstanding; // never answered
  for (const s of sockets) s.close();
  result.latencies.sort((a, b) => a - b);
  result.completed = Object.values(result.statusCodes).reduce((a, n) => a + n, 0);
  result.rps = result.latencies.length / load.seconds;
  return result;
}

interface Connection {
  /** Sends the request; `done` gets the answer's status once its body has been read. */
  send(done: (status: number) => void): void;
  close(): void;
}

function openConnection(load: PacedLoad, auth: string | undefined): Promise<Connection> {
  const headers: Record<string, string> = { host: `127.0.0.1:${load.port}`, connection: 'keep-alive', ...load.headers };
  if (auth) headers.authorization = auth;
  if (load.body !== undefined) headers['content-length'] = String(Buffer.byteLength(load.body));
  const head =
    `${load.method} ${load.path} HTTP/1.1\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  const request = Buffer.from(head + (load.body ?? ''));
  return new Promise((resolve, reject) => {
    const socket = net.connect(load.port, '127.0.0.1');
    socket.setNoDelay(true);
    let pending: ((status: number) => void) | null = null;
    let buffered: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      const answer = completeAnswer(buffered);
      if (!answer) return;
      buffered = buffered.subarray(answer.length);
      const done = pending;
      pending = null;
      done?.(answer.status);
    });
    socket.on('error', (err) => {
      if (pending) pending(0);
      else reject(err);
    });
    socket.once('connect', () =>
      resolve({
        send(done) {
          pending = done;
          socket.write(request);
        },
        close: () => socket.destroy(),
      }),
    );
  });
}

/**
 * The status and byte length of the first answer in `buf`, once it is all
 * there: Content-Length bodies (every Parley answer has one) and chunked ones.
 */
function completeAnswer(buf: Buffer): { status: number; length: number } | null {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const head = buf.subarray(0, headEnd).toString('latin1');
  const status = Number(head.slice(9, 12));
  const bodyStart = headEnd + 4;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const end = bodyStart + Number(length[1]);
    return buf.length >= end ? { status, length: end } : null;
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const end = buf.indexOf('\r\n0\r\n\r\n', bodyStart - 2);
    return end < 0 ? null : { status, length: end + 7 };
  }
  return { status, length: bodyStart };
}
