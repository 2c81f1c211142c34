/** A progress bar on stderr: done/total, rows per second, ETA. Redraws in place on a TTY, else a line every 5 s. */
export class Progress {
  private readonly start = Date.now();
  private lastDraw = 0;
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  update(done: number, extra = '', final = false): void {
    const now = Date.now();
    // Off a TTY the final line is finish()'s alone.
    if (!final && (now - this.lastDraw < (this.tty ? 250 : 5000) || (!this.tty && done >= this.total))) return;
    this.lastDraw = now;
    const elapsed = (now - this.start) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const eta = rate > 0 ? (this.total - done) / rate : 0;
    const frac = this.total ? Math.min(1, done / this.total) : 1;
    const width = 30;
    const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.');
    const line =
      `${this.label} [${bar}] ${(frac * 100).toFixed(1).padStart(5)}% ${fmtInt(done)}/${fmtInt(this.total)} ` +
      `${fmtInt(rate)}/s ETA ${fmtDuration(eta)}${extra ? '  ' + extra : ''}`;
    process.stderr.write(this.tty ? `\r${line}\x1b[K` : `${line}\n`);
  }

  finish(extra = ''): number {
    this.update(this.total, extra, true);
    if (this.tty) process.stderr.write('\n');
    return (Date.now() - this.start) / 1000;
  }
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

export function fmtDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
}
