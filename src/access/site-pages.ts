import type { Knex } from 'knex';
import { isInviteLinkUsable } from '../domain/invite-links';
import { hostLabel } from '../domain/realm-address';
import { getInviteByKey } from '../queries/invites';
import { nowSeconds } from '../queries/ids';
import { getRealmForHost } from '../queries/realm-for-host';
import { getRealmById } from '../queries/realms';
import type { RealmRow } from '../queries/rows';

/** The organization a site page at this host names, if the host addresses one that is active. */
export async function getSitePageRealm(db: Knex, host: string | undefined, externalUrl: string): Promise<RealmRow | undefined> {
  const realm = await getRealmForHost(db, hostLabel(host, externalUrl));
  return realm && !realm.deactivated ? realm : undefined;
}

/**
 * The organization a reusable invitation link invites to, when the link can
 * still be used and the organization is active; undefined otherwise, alike
 * for a key that never existed, so a page cannot be used to probe keys.
 */
export async function getInviteLinkRealm(db: Knex, key: string): Promise<RealmRow | undefined> {
  const invite = await getInviteByKey(db, key);
  if (!invite || !isInviteLinkUsable(invite, nowSeconds())) return undefined;
  const realm = await getRealmById(db, invite.realm_id);
  return realm && !realm.deactivated ? realm : undefined;
}
