import type { Knex } from 'knex';
import { getRealmByStringId, listRealms } from './realms';
import type { RealmRow } from './rows';

/**
 * The organization a request addresses: the one whose subdomain is the
 * host's label (src/domain/realm-address.ts hostLabel), else the root
 * organization (empty subdomain), else the only one there is.
 */
export async function getRealmForHost(db: Knex, label: string): Promise<RealmRow | undefined> {
  if (label) {
    const bySub = await getRealmByStringId(db, label);
    if (bySub) return bySub;
  }
  const root = await getRealmByStringId(db, '');
  if (root) return root;
  const all = await listRealms(db);
  return all.length === 1 ? all[0] : undefined;
}
