import type { Clock } from '../../src/events/clock';

/**
 * A clock the test moves by hand: `now()` stands still until `advance`,
 * which runs the timers falling due on the way, in order, each at its own
 * time. Nothing ever fires on its own, so no test waits on the wall clock.
 */
export class ManualClock implements Clock {
  private time: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.now()) {
    this.time = start;
  }

  now = (): number => this.time;

  schedule(fn: () => void, ms: number): () => void {
    const id = this.seq++;
    this.timers.set(id, { at: this.time + ms, fn });
    return () => this.timers.delete(id);
  }

  /** Timers set and not yet run or cancelled. */
  get pending(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | null = null;
      for (const entry of this.timers) if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = next[1].at;
      next[1].fn();
    }
    this.time = end;
  }
}

/** Resolves once `condition` holds (checked as the event loop turns), or fails after `timeoutMs` saying `what`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}
