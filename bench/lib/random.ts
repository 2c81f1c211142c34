/**
 * Deterministic randomness for the dataset generator: the same scale and
 * seed always give the same organization, so runs are comparable.
 */

/** mulberry32: small, fast, good enough for synthetic data. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

/** Samples an index in [0, weights.length) with probability proportional to its weight (binary search on the CDF). */
export class WeightedSampler {
  private readonly cdf: Float64Array;
  readonly total: number;
  constructor(weights: readonly number[]) {
    this.cdf = new Float64Array(weights.length);
    let acc = 0;
    weights.forEach((w, i) => {
      acc += w;
      this.cdf[i] = acc;
    });
    this.total = acc;
  }
  sample(rng: Rng): number {
    const x = rng.next() * this.total;
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Zipf(-Mandelbrot) weights 1/(rank+q)^s for ranks 1..n (the long tail of topics, words and channel traffic); q flattens the head. */
export const zipfWeights = (n: number, s: number, q = 0): number[] => Array.from({ length: n }, (_, i) => 1 / Math.pow(i + 1 + q, s));
