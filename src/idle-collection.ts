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
 * The collection pauses the process for about 40 ms, once per quiet
 * stretch (when no request has started for `idleMs`; up to three times if
 * V8 keeps the young generation after the first); a long-poll waiting
 * meanwhile is answered that much later, which no client notices.
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
 * a context made while the flag is set gets it, and the flag is cleared
 * again so that no other context (or request) sees it.
 */
function fullCollector(): () => void {
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

export function startIdleCollection(server: Server, idleMs: number, onCollected: (c: Collected) => void): IdleCollection {
  const collect = fullCollector();
  let started = 0;
  let seen = 0;
  let quietSince = Date.now();
  let tries = 0;
  let done = false;
  server.on('request', () => {
    started++;
  });
  const timer = setInterval(
    () => {
      const now = Date.now();
      if (started !== seen) {
        seen = started;
        quietSince = now;
        tries = 0;
        done = false;
        return;
      }
      if (done || now - quietSince < idleMs + tries * RETRY_MS) return;
      tries++;
      const youngBefore = youngGeneration();
      const t0 = performance.now();
      collect();
      const youngAfter = youngGeneration();
      // Just after a burst V8 may judge the allocation rate still high and keep it: try again.
      done = youngAfter <= MIN_YOUNG || youngAfter < youngBefore || tries >= TRIES;
      onCollected({ youngBefore, youngAfter, heapUsed: process.memoryUsage().heapUsed, pauseMs: performance.now() - t0 });
    },
    Math.max(100, Math.floor(idleMs / 4)),
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
