/**
 * Counts failures per key in a sliding window; once `limit` failures fall in
 * the window, further attempts wait until the oldest one ages out. In-process
 * (a multi-process deployment would keep these counters in the database).
 */
export class FailureLimiter {
  private failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowSeconds: number,
    private readonly now: () => number = () => Date.now() / 1000,
    /** Memory bound: past this many keys the oldest-touched are forgotten. */
    private readonly maxKeys = 100_000,
  ) {}

  /** Seconds until another attempt is allowed; 0 when allowed now. */
  retryAfter(key: string): number {
    const times = this.prune(key);
    if (times.length < this.limit) return 0;
    return Math.max(0, times[0]! + this.windowSeconds - this.now());
  }

  fail(key: string): void {
    const times = this.prune(key);
    times.push(this.now());
    this.failures.delete(key); // re-insert: Map order is then least recently failed first
    this.failures.set(key, times);
    while (this.failures.size > this.maxKeys) this.failures.delete(this.failures.keys().next().value!);
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  private prune(key: string): number[] {
    const cutoff = this.now() - this.windowSeconds;
    const times = (this.failures.get(key) ?? []).filter((t) => t > cutoff);
    if (times.length) this.failures.set(key, times);
    else this.failures.delete(key);
    return times;
  }
}
