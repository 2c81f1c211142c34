/**
 * InvalidatingCache's one guarantee (src/cache/invalidating-cache.ts): a
 * value read while an invalidation happened is returned to its reader but
 * never stored, so a read that began before a commit cannot leave the old
 * row in the cache.
 */
import { InvalidatingCache } from '../src/cache/invalidating-cache';

describe('InvalidatingCache', () => {
  it('does not store a value read across an invalidation, but returns it', async () => {
    const cache = new InvalidatingCache<string, { v: number }>('test', 10);
    let finish!: (v: { v: number }) => void;
    const loading = cache.load('k', () => new Promise((resolve) => (finish = resolve)));
    cache.delete('k'); // the change commits while the read is in flight
    finish({ v: 1 });
    expect(await loading).toEqual({ v: 1 });
    expect(cache.peek('k')).toBeUndefined();
    expect(await cache.load('k', async () => ({ v: 2 }))).toEqual({ v: 2 });
    expect(cache.peek('k')).toEqual({ v: 2 });
  });

  it('does not store across a clear either, and counts hits and misses', async () => {
    const cache = new InvalidatingCache<string, { v: number }>('test', 10);
    let finish!: (v: { v: number }) => void;
    const loading = cache.load('k', () => new Promise((resolve) => (finish = resolve)));
    cache.clear();
    finish({ v: 1 });
    await loading;
    expect(cache.size).toBe(0);
    await cache.load('k', async () => ({ v: 2 }));
    await cache.load('k', async () => ({ v: 3 }));
    expect([cache.hits, cache.misses]).toEqual([1, 2]);
  });
});
