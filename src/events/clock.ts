/**
 * Time as the event queues read it and wait on it (idle expiry, heartbeats):
 * the system's in the server; tests inject a clock they move by hand.
 */
export interface Clock {
  now(): number;
  /** Runs `fn` after `ms`, without keeping the process alive; the returned function cancels it. */
  schedule(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
