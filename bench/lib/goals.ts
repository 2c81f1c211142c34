/**
 * The performance targets, as numbers the runner checks on every run
 * (bench/README.md "Targets"). They are set for the 1m dataset on MariaDB;
 * at other scales the verdict is reported too, marked as indicative.
 */
export interface Goal {
  /** Requests per second at least. */
  rps?: number;
  /** 99th percentile latency at most, in ms. */
  p99?: number;
  /** At least this fraction of the same-run Express hello-world's req/s. */
  ofExpress?: number;
  /** p99 at this scale ÷ p99 at 10k at most (search: the cost must not grow with history). */
  flat?: number;
}

export interface Measured {
  rps: number | null;
  p99: number | null;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function describeGoal(g: Goal): string {
  const parts: string[] = [];
  if (g.rps !== undefined) parts.push(`≥ ${fmt(g.rps)} req/s`);
  if (g.ofExpress !== undefined) parts.push(`≥ ${g.ofExpress} × Express`);
  if (g.p99 !== undefined) parts.push(`p99 ≤ ${fmt(g.p99)} ms`);
  if (g.flat !== undefined) parts.push(`flat ≤ ${g.flat}`);
  return parts.join(', ');
}

/**
 * "met", or what was missed and by how much ("req/s 0.41× of 1,000; p99 59 ms > 40").
 * `flat` is null when no 10k run of the same database was found (1 for the 10k run itself).
 */
export function judge(g: Goal, m: Measured, expressRps: number | null, flat: number | null): string {
  const misses: string[] = [];
  if (g.rps !== undefined && m.rps !== null && m.rps < g.rps) misses.push(`req/s ${fmt(m.rps / g.rps, 2)}× of ${fmt(g.rps)}`);
  if (g.ofExpress !== undefined && m.rps !== null && expressRps) {
    const ratio = m.rps / expressRps;
    if (ratio < g.ofExpress) misses.push(`${fmt(ratio, 3)} × Express < ${g.ofExpress}`);
  }
  if (g.p99 !== undefined && m.p99 !== null && m.p99 > g.p99) misses.push(`p99 ${fmt(m.p99)} ms > ${fmt(g.p99)}`);
  if (g.flat !== undefined) {
    if (flat === null) misses.push('flat: no 10k run');
    else if (flat > g.flat) misses.push(`flat ${fmt(flat, 2)} > ${g.flat}`);
  }
  if (m.rps === null && m.p99 === null) return 'not measured';
  return misses.length ? `missed: ${misses.join('; ')}` : 'met';
}

/** Event delivery: send → the other client's GET /events. */
export const EVENT_DELIVERY_P99_MS = 5;
