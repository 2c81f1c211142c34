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
  /** The load is offered at this rate (req/s over all connections); the run must sustain it (98 %). */
  atRate?: number;
}

export interface Measured {
  rps: number | null;
  p99: number | null;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function describeGoal(g: Goal): string {
  const parts: string[] = [];
  if (g.rps !== undefined) parts.push(`≥ ${fmt(g.rps)} req/s`);
  if (g.atRate !== undefined) parts.push(`${fmt(g.atRate)} req/s sustained`);
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
  if (g.atRate !== undefined && m.rps !== null && m.rps < 0.98 * g.atRate)
    misses.push(`sustained ${fmt(m.rps)} of ${fmt(g.atRate)} req/s offered`);
  if (g.p99 !== undefined && m.p99 !== null && m.p99 > g.p99) misses.push(`p99 ${fmt(m.p99)} ms > ${fmt(g.p99)}`);
  if (g.flat !== undefined) {
    if (flat === null) misses.push('flat: no 10k run');
    else if (flat > g.flat) misses.push(`flat ${fmt(flat, 2)} > ${g.flat}`);
  }
  if (m.rps === null && m.p99 === null) return 'not measured';
  return misses.length ? `missed: ${misses.join('; ')}` : 'met';
}

/**
 * Whether a measurement sits so close to its target that this machine's
 * drift could turn the verdict: on unchanged code one scenario ranged over
 * 836–1,185 req/s between runs, and within one hour the same-run Express
 * baseline moved from 7,347 to 9,925 req/s (is:starred: 791 in a full run,
 * 1,071–1,322 twenty minutes later). Every bound the goal sets by rate or
 * latency is checked; a measurement within 25 % of any of them, on either
 * side (0.75–1.33 × the bound), is near. The runner measures such a scenario
 * again and reports the median (BENCH_REPEAT).
 */
export function nearTheLine(g: Goal, m: Measured, expressRps: number | null): boolean {
  const near = (value: number | null, bound: number | undefined) =>
    value !== null && bound !== undefined && bound > 0 && value / bound >= 0.75 && value / bound <= 4 / 3;
  return (
    near(m.rps, g.rps) || near(m.p99, g.p99) || (g.ofExpress !== undefined && expressRps !== null && near(m.rps, g.ofExpress * expressRps))
  );
}

/** Event delivery: send → the other client's GET /events. */
export const EVENT_DELIVERY_P99_MS = 5;
