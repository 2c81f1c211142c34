import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { listRealmDomains, type RealmDomainRow } from '../queries/realm-domains';
import { InvalidatingCache } from './invalidating-cache';

/** An organization's domains, as listRealmDomains reads them. */
interface RealmDomains {
  readonly list: readonly Readonly<RealmDomainRow>[];
}

/**
 * Organization domains by organization: every POST /register that asks for
 * realm_domains (every full one) would otherwise read them. Adding,
 * changing or removing one is a `realm_domains` invalidation
 * (src/queries/realm-domains.ts), which reaches every node before the
 * change's event.
 */
export class RealmDomainCache {
  readonly cache: InvalidatingCache<number, RealmDomains>;

  constructor(
    private readonly db: Knex,
    max: number,
    ttlMs: number,
  ) {
    this.cache = new InvalidatingCache('realm_domains', max, ttlMs);
  }

  async get(realmId: number): Promise<readonly Readonly<RealmDomainRow>[]> {
    const entry = await this.cache.load(realmId, async () => {
      const rows = await listRealmDomains(this.db, realmId);
      return Object.freeze({ list: Object.freeze(rows.map((r) => Object.freeze(r))) });
    });
    return entry?.list ?? [];
  }

  apply(inv: Invalidation): void {
    if (inv.kind === 'realm_domains') this.cache.delete(inv.realmId);
  }
}
