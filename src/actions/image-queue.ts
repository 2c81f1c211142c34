import { rateLimitedError } from '../domain/rate-limits';

/** Image jobs a user may have waiting or running at once; one more is refused with 429. */
export const IMAGE_JOBS_PER_USER = 2;

/**
 * Image work (avatars, custom emoji) runs one job at a time in a process, on
 * one libvips thread (src/actions/sharp.ts), so it holds at most one of
 * libuv's four worker threads and one core. Those threads also read and write
 * every file (uploads, tus, file serving), run scrypt (logins) and zlib:
 * four heavy animated GIFs decoded at once used to hold all four for seconds,
 * and a 4-byte file took 2.6–2.9 s to serve meanwhile. A user's jobs beyond
 * IMAGE_JOBS_PER_USER are refused with Zulip's rate-limit error, its
 * retry-after the queue's expected wait (ADR 0031).
 */
export class ImageQueue {
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private readonly perUser = new Map<number, number>();
  /** A moving average of a job's duration (seconds), for retry-after. */
  private averageSeconds = 0.5;

  /**
   * `timeoutSeconds`: how long one image operation of a job may take (sharp's
   * timeout, which stops libvips mid-work); past it the image is refused as one
   * that does not decode, and the queue moves on.
   */
  constructor(
    private readonly timeoutSeconds: number,
    private readonly concurrency = 1,
  ) {}

  /** Runs `job` when its turn comes, for `userId`, given the time limit of each of its image operations; refuses it at once when the user has too many. */
  async run<T>(userId: number, job: (timeoutSeconds: number) => Promise<T>): Promise<T> {
    const mine = this.perUser.get(userId) ?? 0;
    if (mine >= IMAGE_JOBS_PER_USER) throw rateLimitedError(Math.max(1, (this.waiting.length + this.running) * this.averageSeconds));
    this.perUser.set(userId, mine + 1);
    try {
      if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
      else this.running++;
      const started = performance.now();
      try {
        return await job(this.timeoutSeconds);
      } finally {
        this.averageSeconds = 0.8 * this.averageSeconds + 0.2 * ((performance.now() - started) / 1000);
        const next = this.waiting.shift();
        // The slot passes straight to the next job: `running` stays as it is.
        if (next) next();
        else this.running--;
      }
    } finally {
      const left = (this.perUser.get(userId) ?? 1) - 1;
      if (left > 0) this.perUser.set(userId, left);
      else this.perUser.delete(userId);
    }
  }

  /** Jobs running and waiting (tests, metrics). */
  get size(): number {
    return this.running + this.waiting.length;
  }
}
