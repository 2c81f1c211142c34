/**
 * A seeded generator for tests that walk through random operations: the
 * same seed gives the same walk, so a failure can be replayed. Mulberry32,
 * whose low bits are as random as its high ones (a plain linear
 * congruential step modulo a power of two cycles in its low bits, and
 * `% n` then picks from a few values only).
 */
export function seededRandom(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}
