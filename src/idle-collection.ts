import type { Server } from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full garbage collection once the server has been idle for a while
 * after work: at start, and after each burst of requests.
 *
 * Why: V8 grows its young generation to 16 MiB per semi-space while a
 * process allocates fast (start-up compiles the contract's validators and
 * seeds the demo organization; a burst of requests does the same), and
 * gives it back only at a full collection, which an idle process does not
 * otherwise reach. `make run` idled at 150 MiB resident; after one
 * collection the same process holds 118 MiB, with no flag that would make
 * collections under load more frequent (`--max-semi-space-size=2` got
 * about as low, and costs every busy server more young collections).
 *
 * The collection pauses the process (about 40 ms with the demo
 * organization's heap; longer with a large one), once per quiet stretch
 * that follows growth, up to three times if V8 keeps the young generation
 * after the first; a long-poll waiting meanwhile is answered that much
 * later, which no client notices.
 */
export interface IdleCollection {
  /** Stops the timer. */
  stop(): void;
}

/** What one collection did, for the log. */
export interface Collected {
  /** The young generation's size before and after, in bytes. */
  youngBefore: number;
  youngAfter: number;
  /** The live heap after it, in bytes. */
  heapUsed: number;
  pauseMs: number;
}

/**
 * V8's `gc()`, which node gives only to code started with `--expose-gc`:
 * the process's own when it was started so, else from a context made while
 * the flag is set, which is cleared again so that no other context sees it.
 */
function fullCollector(): () => void {
  const own = (globalThis as { gc?: () => void }).gc;
  if (typeof own === 'function') return own;
  v8.setFlagsFromString('--expose-gc');
  try {
    return vm.runInNewContext('gc') as () => void;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

/** The young generation's smallest size (one semi-space page each way): nothing left to give back. */
const MIN_YOUNG = 2 * 1048576;

const youngGeneration = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/** Collections per quiet stretch at most, when V8 keeps the young generation after the first. */
const TRIES = 3;
/**
 * Between those: V8 shrinks the young generation at a full collection only
 * when the allocation rate it measures over the last five seconds is low.
 */
const RETRY_MS = 5_000;

/**
 * Quiet: no request has started for `idleMs`. Then, if the young generation
 * is larger than its smallest size — whatever grew it: requests, or work of
 * the server's own such as a mail queue's drain — one collection, and up to
 * two more `RETRY_MS` apart while V8 keeps it. A quiet server whose young
 * generation is already small is never paused.
 */
export function startIdleCollection(server: Server, idleMs: number, onCollected: (c: Collected) => void): IdleCollection {
  const collect = fullCollector();
  let started = 0;
  let seen = 0;
  let quietSince = performance.now();
  let tries = 0;
  // After TRIES without a shrink: the size V8 kept, not tried again until it changes.
  let keptSize = -1;
  server.on('request', () => {
    started++;
  });
  const timer = setInterval(
    () => {
      const now = performance.now();
      if (started !== seen) {
        seen = started;
        quietSince = now;
        tries = 0;
        return;
      }
      const youngBefore = youngGeneration();
      if (youngBefore <= MIN_YOUNG || youngBefore === keptSize) return;
      if (now - quietSince < idleMs + tries * RETRY_MS) return;
      const t0 = performance.now();
      collect();
      const youngAfter = youngGeneration();
      if (youngAfter <= MIN_YOUNG) tries = 0;
      else if (++tries >= TRIES) {
        keptSize = youngAfter;
        tries = 0;
      }
      onCollected({ youngBefore, youngAfter, heapUsed: process.memoryUsage().heapUsed, pauseMs: performance.now() - t0 });
    },
    // Checked a few times per idle period, at least every 5 s (an interval beyond 2^31 ms would fire at once).
    Math.min(5_000, Math.max(100, Math.floor(idleMs / 4))),
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
