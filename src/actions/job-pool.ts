/** Where background jobs report (pino's logger, or nothing). */
export interface JobLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLog: JobLog = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * Background work after commit, off the request (the push relay, outgoing
 * webhooks): jobs run a few at a time, in a bounded queue, and a job may
 * put work back for later (a retry) without the pool ever looking idle
 * meanwhile. Stopping drops what waits; what is in flight finishes on its own.
 */
export class JobPool {
  private readonly queue: Array<() => Promise<void>> = [];
  private pending = 0; // queued + in flight + waiting for a later run
  private active = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private idleWaiters: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly concurrency: number,
    /** Jobs queued, in flight or waiting; beyond it `add` refuses. */
    readonly limit: number,
  ) {}

  /** Jobs queued, in flight or waiting for a later run (GET /metrics). */
  get backlog(): number {
    return this.pending;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Resolves once nothing is queued, in flight or waiting (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Queues a job; false when the pool is full or stopped (the caller logs the drop). */
  add(work: () => Promise<void>): boolean {
    if (this.stopped || this.pending >= this.limit) return false;
    this.pending++;
    this.queue.push(work);
    // On a later turn: the request that queued the job answers first.
    setImmediate(() => this.pump());
    return true;
  }

  /** Queues a job after `ms`, counted as pending meanwhile (a retry: never refused for a full pool). */
  addLater(ms: number, work: () => Promise<void>): void {
    if (this.stopped) return;
    this.pending++;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.queue.push(work);
      this.pump();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.length = 0;
    // Jobs in flight finish on their own; nobody waits for the dropped ones.
    this.pending = this.active;
    if (this.pending === 0) this.wakeIdleWaiters();
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0 && !this.stopped) {
      const work = this.queue.shift()!;
      this.active++;
      void work()
        .catch(() => {}) // each job reports its own failures
        .finally(() => {
          this.active--;
          this.pending--;
          if (this.pending <= 0) this.wakeIdleWaiters();
          this.pump();
        });
    }
  }

  private wakeIdleWaiters(): void {
    this.pending = Math.max(this.pending, 0);
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
