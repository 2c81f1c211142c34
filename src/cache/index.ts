import type { EventBus, Invalidation } from '../events/bus';
import type { InvalidatingCache } from './invalidating-cache';

/**
 * This process's caches (docs/adr/0011). Each cache module registers its
 * cache with the invalidations that concern it; the bus hands every
 * invalidation here, after the change committed and before its events are
 * delivered.
 */
export class Caches {
  private readonly entries: Array<{ cache: InvalidatingCache<never, never>; apply: (inv: Invalidation) => void }> = [];
  private readonly unsubscribe: () => void;

  constructor(bus: EventBus) {
    this.unsubscribe = bus.onInvalidate((inv) => this.apply(inv));
  }

  /** Adds a cache; `apply` drops what an invalidation makes stale (`{kind: 'all'}` is handled here). */
  register<K extends string | number, V extends object>(
    cache: InvalidatingCache<K, V>,
    apply: (inv: Invalidation) => void,
  ): InvalidatingCache<K, V> {
    this.entries.push({ cache: cache as unknown as InvalidatingCache<never, never>, apply });
    return cache;
  }

  apply(inv: Invalidation): void {
    for (const e of this.entries) {
      if (inv.kind === 'all') e.cache.clear();
      else e.apply(inv);
    }
  }

  /** Size and hit counts of every cache (metrics, `cache stats`). */
  stats(): Array<{ name: string; size: number; hits: number; misses: number }> {
    return this.entries.map(({ cache }) => ({ name: cache.name, size: cache.size, hits: cache.hits, misses: cache.misses }));
  }

  close(): void {
    this.unsubscribe();
  }
}
