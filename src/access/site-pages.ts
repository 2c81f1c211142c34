import type { Knex } from 'knex';
import { hostLabel } from '../domain/realm-address';
import { getRealmForHost } from '../queries/realm-for-host';
import type { RealmRow } from '../queries/rows';

/** The organization a site page at this host names, if the host addresses one that is active. */
export async function getSitePageRealm(db: Knex, host: string | undefined, externalUrl: string): Promise<RealmRow | undefined> {
  const realm = await getRealmForHost(db, hostLabel(host, externalUrl));
  return realm && !realm.deactivated ? realm : undefined;
}
