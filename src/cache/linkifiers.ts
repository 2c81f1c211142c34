import type { Knex } from 'knex';
import { compileLinkifier, type CompiledLinkifier } from '../domain/linkifiers';
import type { Invalidation } from '../ports/invalidation';
import { listLinkifiers } from '../queries/linkifiers';
import { InvalidatingCache } from './invalidating-cache';

/** An organization's linkifiers, compiled, in the order they apply. */
export interface RealmLinkifiers {
  readonly list: readonly CompiledLinkifier[];
}

/**
 * Compiled linkifiers by organization: every send renders with them and
 * every page of messages computes its topic links with them, so they are
 * read and compiled once, not per message. A change of an organization's
 * linkifiers is a `linkifiers` invalidation (src/queries/linkifiers.ts),
 * which reaches every node before the change's event and drops nothing
 * else; a change of the organization itself (`realm`) drops them too.
 */
export class LinkifierCache {
  readonly cache: InvalidatingCache<number, RealmLinkifiers>;

  constructor(
    private readonly db: Knex,
    max: number,
    ttlMs: number,
  ) {
    this.cache = new InvalidatingCache('linkifiers', max, ttlMs);
  }

  async get(realmId: number): Promise<readonly CompiledLinkifier[]> {
    const entry = await this.cache.load(realmId, async () => {
      const rows = await listLinkifiers(this.db, realmId);
      const list = rows.map(compileLinkifier).filter((l): l is CompiledLinkifier => l !== null);
      return Object.freeze({ list: Object.freeze(list) });
    });
    return entry?.list ?? [];
  }

  apply(inv: Invalidation): void {
    if (inv.kind === 'linkifiers' || inv.kind === 'realm') this.cache.delete(inv.realmId);
  }
}
