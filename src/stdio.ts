import fs from 'node:fs';
import { Writable } from 'node:stream';

/**
 * The process's output must never hold it: a reader that went away (a pipe
 * into `head`, a log collector restarted) makes every write fail with EPIPE,
 * and a reader that stopped reading fills the pipe. Writes to stdout and
 * stderr that fail are dropped, never thrown, so a stop still ends in exit.
 */
export function keepWritesFromBlockingExit(): void {
  const ignore = () => undefined;
  process.stdout.on('error', ignore);
  process.stderr.on('error', ignore);
}

/** How long a log line may wait for a full pipe before it is dropped. */
const FULL_PIPE_WAIT_MS = 50;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Where log lines go: fd 1, written synchronously (a line logged before a
 * crash is not lost in a buffer), as pino's own destination does. But where
 * that destination retries a full pipe without end (Node makes a stdout
 * pipe non-blocking, so a reader that stopped reading gives EAGAIN), holding
 * the event loop and with it the stop a SIGTERM asks for, here a full pipe
 * delays a line by at most FULL_PIPE_WAIT_MS before it is dropped, and once
 * one was dropped the next lines are dropped at once until the pipe takes
 * one again. A closed reader (EPIPE) ends logging instead of raising.
 */
export class StdoutLines extends Writable {
  private closedReader = false;
  private stalled = false;

  constructor(private readonly fd = 1) {
    super({ decodeStrings: false });
  }

  /** pino calls this directly with each line (a string). */
  override write(chunk: unknown, encodingOrCb?: unknown, cb?: unknown): boolean {
    this.writeLine(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array));
    const done = typeof encodingOrCb === 'function' ? encodingOrCb : cb;
    if (typeof done === 'function') (done as () => void)();
    return true;
  }

  private writeLine(line: string | Buffer): void {
    if (this.closedReader) return;
    let data = typeof line === 'string' ? Buffer.from(line) : line;
    const deadline = Date.now() + FULL_PIPE_WAIT_MS;
    while (data.length > 0) {
      try {
        data = data.subarray(fs.writeSync(this.fd, data));
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'EAGAIN' && !this.stalled && Date.now() < deadline) {
          Atomics.wait(sleeper, 0, 0, 2);
          continue;
        }
        if (code === 'EAGAIN') this.stalled = true;
        else this.closedReader = true; // EPIPE, EBADF: nobody reads any more
        return;
      }
      this.stalled = false;
    }
  }
}
