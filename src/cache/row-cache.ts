import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { InvalidatingCache } from './invalidating-cache';

/**
 * What the caches of rows read from `db` share: an InvalidatingCache named
 * `name`, emptied of an organization's entries by that organization's
 * invalidation (`realmOf` names an entry's organization) and by whatever
 * else `drop` says makes an entry stale.
 */
export abstract class RowCache<K extends string | number, V extends object> {
  readonly cache: InvalidatingCache<K, V>;

  protected constructor(
    protected readonly db: Knex,
    name: string,
    max: number,
    ttlMs: number,
    private readonly realmOf: (entry: V) => number,
  ) {
    this.cache = new InvalidatingCache(name, max, ttlMs);
  }

  apply(inv: Invalidation): void {
    if (inv.kind === 'realm') this.cache.deleteWhere((_, entry) => this.realmOf(entry) === inv.realmId);
    else this.drop(inv);
  }

  /** Drops what an invalidation other than an organization's makes stale. */
  protected abstract drop(inv: Invalidation): void;
}
