import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { getRealmById, listRealmStringIds } from '../queries/realms';
import type { RealmRow } from '../queries/rows';
import { InvalidatingCache } from './invalidating-cache';

/** The organizations' subdomains: which one a host name addresses (src/access/addressed-realm.ts). */
export interface RealmDirectory {
  stringIds: ReadonlySet<string>;
}

/**
 * Organization rows by id, and the list of subdomains. Any invalidation of
 * an organization drops its row and the list (a new organization, a
 * changed subdomain); they are few and small.
 */
export class RealmCache {
  readonly rows: InvalidatingCache<number, RealmRow>;
  readonly directory: InvalidatingCache<number, RealmDirectory>;

  constructor(
    private readonly db: Knex,
    max: number,
    ttlMs: number,
  ) {
    this.rows = new InvalidatingCache('realms', max, ttlMs);
    this.directory = new InvalidatingCache('realm-directory', 1, ttlMs);
  }

  async get(id: number): Promise<RealmRow | undefined> {
    return this.rows.load(id, async () => {
      const row = await getRealmById(this.db, id);
      return row && Object.freeze(row);
    });
  }

  async subdomains(): Promise<ReadonlySet<string>> {
    const dir = await this.directory.load(0, async () => ({ stringIds: new Set(await listRealmStringIds(this.db)) }));
    return dir!.stringIds;
  }

  applyToRows(inv: Invalidation): void {
    if (inv.kind === 'realm') this.rows.delete(inv.realmId);
  }

  applyToDirectory(inv: Invalidation): void {
    if (inv.kind === 'realm') this.directory.clear();
  }
}
