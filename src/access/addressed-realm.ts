import type { Knex } from 'knex';
import type { LoginCandidate } from '../queries/auth';
import { findUsersForLogin } from '../queries/auth';
import { getRealmForHost as queryRealmForHost } from '../queries/realm-for-host';
import type { RealmRow, UserRow } from '../queries/rows';

/**
 * The organization a request addresses decides which account an address
 * means: the one whose subdomain is the host's first label; for any other
 * host the root organization (empty subdomain), or the only organization
 * there is. An account elsewhere does not authenticate here (Zulip: "Account
 * is not associated with this subdomain").
 */
export const hostLabel = (host: string | undefined) => (host ?? '').split(':')[0]!.split('.')[0]!.toLowerCase();

/** The string_id of the organization the host addresses, or undefined for none. */
export function addressedRealm(
  c: Pick<LoginCandidate, 'host_realm_exists' | 'root_realm_exists' | 'realm_count' | 'realm_string_id'>,
  label: string,
): string | undefined {
  return c.host_realm_exists ? label : c.root_realm_exists ? '' : c.realm_count === 1 ? c.realm_string_id : undefined;
}

/** The account an email address names at the organization this host addresses (POST /fetch_api_key). */
export async function getUserAtAddressedRealm(
  db: Knex,
  email: string,
  host: string | undefined,
): Promise<(UserRow & { realm_deactivated: boolean }) | undefined> {
  const label = hostLabel(host);
  const candidates = await findUsersForLogin(db, email, label);
  const first = candidates[0];
  if (!first) return undefined;
  const addressed = addressedRealm(first, label);
  return candidates.find((u) => u.realm_string_id === addressed);
}

/** The organization this host addresses (GET /server_settings, before anyone logs in). */
export function getRealmForHost(db: Knex, host: string | undefined): Promise<RealmRow | undefined> {
  return queryRealmForHost(db, host);
}
