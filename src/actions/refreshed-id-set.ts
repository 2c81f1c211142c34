/**
 * A set of user ids kept in memory for a bus listener's first, cheap
 * decision (the users with push devices, the outgoing-webhook bots): read
 * at start, reread every `everyMs` for changes other processes made, and
 * added to at once (`note`) by the process that makes one. Until the first
 * read completes the set is null and work that needs it waits (bounded).
 */
export class RefreshedIdSet {
  private ids: Set<number> | null = null;
  private notedDuringRefresh: Set<number> | null = null;
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly read: () => Promise<number[]>,
    private readonly onError: (err: unknown) => void,
    /** Work waiting for the first read; beyond it `whenRead` refuses. */
    private readonly waitLimit: number,
  ) {}

  start(everyMs: number): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.waiting.length = 0;
  }

  /** The set as last read (with what was noted since); null before the first read. */
  get current(): ReadonlySet<number> | null {
    return this.ids;
  }

  note(id: number): void {
    this.ids?.add(id);
    this.notedDuringRefresh?.add(id);
  }

  /** Runs `then` once the first read is done; false (nothing queued) when too much already waits. */
  whenRead(then: () => void): boolean {
    if (this.waiting.length >= this.waitLimit) return false;
    this.waiting.push(then);
    return true;
  }

  async refresh(): Promise<void> {
    // An id noted while the read runs may be missing from its result: it is kept.
    const noted = (this.notedDuringRefresh = new Set<number>());
    try {
      const ids = await this.read();
      if (this.stopped) return;
      this.ids = new Set([...ids, ...noted]);
      for (const run of this.waiting.splice(0)) run();
    } catch (err) {
      if (!this.stopped) this.onError(err);
    } finally {
      if (this.notedDuringRefresh === noted) this.notedDuringRefresh = null;
    }
  }
}
