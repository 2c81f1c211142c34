import type { Readable } from 'node:stream';

/**
 * The server's V8 collections, read from its `--trace-gc` lines as they
 * arrive, each stamped with the wall clock when it was read. The clock
 * the lines carry counts from the server's start, which the bench does not
 * know precisely; the lines reach the bench within a millisecond of the
 * collection, which is precise enough to put them in a measured window.
 *
 * Why it is reported: at the POST rows' load, a single old-generation
 * collection (a mark-compact: an 8–16 ms pause, then the queue it built up)
 * holds up about 1 % of a 10 s run's requests, so whether one fell into a
 * run decides its p99 (ADR 0024, bench/results/2026-11-28-unread-index.md).
 */
export interface GcEntry {
  at: number;
  major: boolean;
  pauseMs: number;
}

export interface GcWindow {
  major: number;
  majorPausesMs: number[];
  minor: number;
  minorPauseMs: number;
}

/** `[pid:addr]  1234 ms: Scavenge 72.8 (93.8) -> 61.5 (94.8) MB, 4.07 / 0.00 ms  (…)`; also Mark-Compact, Minor Mark-Compact (Minor MS). */
const LINE = /\d+ ms: (Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Compact|Minor Mark-Sweep|Minor MS)\b[^,\n]*, ([\d.]+) \/ [\d.]+ ms/;

export class GcLog {
  private readonly entries: GcEntry[] = [];
  private partial = '';

  constructor(stream: Readable) {
    stream.on('data', (chunk: Buffer) => {
      const text = this.partial + chunk.toString();
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      const at = Date.now();
      for (const line of lines) this.add(line, at);
    });
  }

  /** Whether the server prints its collections (it was started with --trace-gc and has collected once). */
  get tracing(): boolean {
    return this.entries.length > 0;
  }

  add(line: string, at: number): void {
    const m = LINE.exec(line);
    if (!m) return;
    // A minor mark-compact (V8's alternative young-generation collector) is young, as a scavenge.
    this.entries.push({ at, major: !m[1]!.startsWith('Minor') && m[1] !== 'Scavenge', pauseMs: Number(m[2]) });
  }

  /** The collections read between `from` and `to` (wall clock, ms). */
  window(from: number, to: number): GcWindow {
    const inside = this.entries.filter((e) => e.at >= from && e.at <= to);
    const minor = inside.filter((e) => !e.major);
    return {
      major: inside.length - minor.length,
      majorPausesMs: inside.filter((e) => e.major).map((e) => e.pauseMs),
      minor: minor.length,
      minorPauseMs: minor.reduce((a, e) => a + e.pauseMs, 0),
    };
  }
}

/** "2 mark-compacts (7.8 + 15.3 ms), 48 scavenges (96 ms in all)". */
export function describeGc(w: GcWindow): string {
  const majors = w.major
    ? `${w.major} mark-compact${w.major > 1 ? 's' : ''} (${w.majorPausesMs.map((p) => p.toFixed(1)).join(' + ')} ms)`
    : 'no mark-compact';
  return `${majors}, ${w.minor} scavenge${w.minor === 1 ? '' : 's'} (${w.minorPauseMs.toFixed(0)} ms in all)`;
}
