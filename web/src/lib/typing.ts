/**
 * When to tell the server the user is typing, by Zulip's protocol: "start"
 * on the first keystroke in a conversation and again every
 * `startedWaitMs` (10 s) while typing goes on, since others drop a typist
 * not renewed; "stop" after `stoppedWaitMs` (5 s) without a keystroke, when
 * the text is emptied, sent, or the user moves to another conversation.
 * The clock and timers are passed in, so the rhythm can be tested.
 */
export interface TypingClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export class TypingNotifier<T> {
  private current: { key: string; to: T; startedAt: number } | null = null;
  private idle: unknown = null;

  constructor(
    private readonly send: (op: 'start' | 'stop', to: T) => void,
    private readonly periods: () => { startedWaitMs: number; stoppedWaitMs: number },
    private readonly clock: TypingClock = {
      now: () => Date.now(),
      setTimeout: (run, ms) => setTimeout(run, ms),
      clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    },
  ) {}

  /** A keystroke in the conversation `key` (addressed as `to`); an empty text stops. */
  typed(key: string, to: T, empty: boolean): void {
    if (empty) {
      this.stop();
      return;
    }
    const now = this.clock.now();
    if (this.current && this.current.key !== key) this.stop();
    if (!this.current) {
      this.current = { key, to, startedAt: now };
      this.send('start', to);
    } else if (now - this.current.startedAt >= this.periods().startedWaitMs) {
      this.current.startedAt = now;
      this.send('start', to);
    }
    if (this.idle !== null) this.clock.clearTimeout(this.idle);
    this.idle = this.clock.setTimeout(() => this.stop(), this.periods().stoppedWaitMs);
  }

  /** Typing ended (sent, idle, left): "stop" if a "start" is outstanding. */
  stop(): void {
    if (this.idle !== null) this.clock.clearTimeout(this.idle);
    this.idle = null;
    const was = this.current;
    this.current = null;
    if (was) this.send('stop', was.to);
  }
}
