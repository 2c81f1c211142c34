import type { Knex } from 'knex';
import type { Playground } from '../domain/playgrounds';
import type { Invalidation } from '../ports/invalidation';
import { listPlaygrounds } from '../queries/playgrounds';
import { InvalidatingCache } from './invalidating-cache';

/** An organization's code playgrounds, oldest first. */
interface RealmPlaygrounds {
  readonly list: readonly Readonly<Playground>[];
}

/**
 * Code playgrounds by organization: every POST /register that asks for
 * realm_playgrounds (every full one) would otherwise read them. Adding or
 * removing one is a `playgrounds` invalidation (src/queries/playgrounds.ts),
 * which reaches every node before the change's event.
 */
export class PlaygroundCache {
  readonly cache: InvalidatingCache<number, RealmPlaygrounds>;

  constructor(
    private readonly db: Knex,
    max: number,
    ttlMs: number,
  ) {
    this.cache = new InvalidatingCache('playgrounds', max, ttlMs);
  }

  async get(realmId: number): Promise<readonly Readonly<Playground>[]> {
    const entry = await this.cache.load(realmId, async () => {
      const rows = await listPlaygrounds(this.db, realmId);
      return Object.freeze({ list: Object.freeze(rows.map((r) => Object.freeze(r))) });
    });
    return entry?.list ?? [];
  }

  apply(inv: Invalidation): void {
    if (inv.kind === 'playgrounds') this.cache.delete(inv.realmId);
  }
}
