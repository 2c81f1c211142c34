import type { Knex } from 'knex';
import type { Data } from '../contract';
import { hostLabel, realmUrl } from '../domain/realm-address';
import { ApiError } from '../errors';
import { renderMarkdown } from '../markdown/render';
import type { LoginCandidate } from '../queries/auth';
import { getUserForLogin } from '../queries/auth';
import { getRealmForHost } from '../queries/realm-for-host';
import type { RealmRow, UserRow } from '../queries/rows';
import { toApiServerSettings } from '../serializers/server';

/**
 * The organization a request addresses decides which account an address
 * means: the one whose subdomain the host names (src/domain/realm-address.ts);
 * for any other host the root organization (empty subdomain), or the only
 * organization there is. An account elsewhere does not authenticate here
 * (Zulip: "Account is not associated with this subdomain").
 *
 * The string_id of the organization the host's label addresses, or undefined for none.
 */
export function addressedRealm(
  c: Pick<LoginCandidate, 'host_realm_exists' | 'root_realm_exists' | 'realm_count' | 'realm_string_id'>,
  label: string,
): string | undefined {
  return c.host_realm_exists ? label : c.root_realm_exists ? '' : c.realm_count === 1 ? c.realm_string_id : undefined;
}

/**
 * POST /fetch_api_key: the organization this host addresses, and the account
 * the address names there (its real address in any case, or its API email).
 */
export async function getLoginAtAddressedRealm(
  db: Knex,
  email: string,
  host: string | undefined,
  externalUrl: string,
): Promise<{ realm?: RealmRow; user?: UserRow }> {
  const realm = await getRealmForHost(db, hostLabel(host, externalUrl));
  if (!realm) return {};
  return { realm, user: await getUserForLogin(db, realm.id, email) };
}

/** GET /server_settings: what a client needs to know about the organization this host addresses, before logging in. */
export async function getServerSettings(
  db: Knex,
  host: string | undefined,
  externalUrl: string,
  pushNotificationsEnabled: boolean,
): Promise<Data<'get-server-settings'>> {
  const realm = await getRealmForHost(db, hostLabel(host, externalUrl));
  if (!realm) throw new ApiError('There is no organization at this address.', 'BAD_REQUEST', 404);
  return toApiServerSettings(realm, realmUrl(externalUrl, realm.string_id), renderMarkdown(realm.description), pushNotificationsEnabled);
}
