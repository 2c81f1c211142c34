import { LRUCache } from 'lru-cache';

/**
 * A bounded per-process cache (lru-cache) that never keeps a value older
 * than the last invalidation.
 *
 * The race it closes: a request reads a row, a second request commits a
 * change to it and invalidates the key, then the first request stores what
 * it read — a stale value that would stay until evicted. `load` notes the
 * cache's generation before reading and stores the result only when no
 * invalidation happened in between (of any key: reads take milliseconds,
 * so the occasional value not stored costs one more read later, while a
 * per-key record would have to be as large as the cache itself). The value
 * is still returned to its caller, whose request began before the change.
 */
export class InvalidatingCache<K extends string | number, V extends object> {
  private readonly values: LRUCache<K, V>;
  private generation = 0;
  hits = 0;
  misses = 0;

  constructor(
    readonly name: string,
    max: number,
    ttlMs = 0,
  ) {
    this.values = new LRUCache<K, V>({ max, ...(ttlMs > 0 ? { ttl: ttlMs } : {}) });
  }

  get size(): number {
    return this.values.size;
  }

  /** The cached value, or `read()`'s, stored unless something was invalidated meanwhile. */
  async load(key: K, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = this.values.get(key);
    if (cached !== undefined) {
      this.hits++;
      return cached;
    }
    this.misses++;
    const before = this.generation;
    const value = await read();
    if (value !== undefined && this.generation === before) this.values.set(key, value);
    return value;
  }

  /**
   * Several keys at once: the cached values, and `read(missing)`'s for the
   * others in one call, stored under the same rule as `load`'s.
   */
  async loadMany(keys: Iterable<K>, read: (missing: K[]) => Promise<Map<K, V>>): Promise<Map<K, V>> {
    const found = new Map<K, V>();
    const missing: K[] = [];
    for (const key of new Set(keys)) {
      const cached = this.values.get(key);
      if (cached === undefined) missing.push(key);
      else found.set(key, cached);
    }
    this.hits += found.size;
    if (missing.length === 0) return found;
    this.misses += missing.length;
    const before = this.generation;
    const fresh = await read(missing);
    const store = this.generation === before;
    for (const [key, value] of fresh) {
      found.set(key, value);
      if (store) this.values.set(key, value);
    }
    return found;
  }

  /** Only what is cached (no read, no statistics). */
  peek(key: K): V | undefined {
    return this.values.peek(key);
  }

  delete(key: K): void {
    this.generation++;
    this.values.delete(key);
  }

  /** Deletes every entry the predicate accepts (a scan: for rare, broad invalidations). */
  deleteWhere(accept: (key: K, value: V) => boolean): void {
    this.generation++;
    for (const [key, value] of this.values.entries()) if (accept(key, value)) this.values.delete(key);
  }

  /** Empties the cache; no load in flight stores its value. */
  clear(): void {
    this.generation++;
    this.values.clear();
  }
}
