import type { Knex } from 'knex';
import { constantTimeEqual } from '../domain/secrets';
import { ApiError, UnauthorizedError } from '../errors';
import type { UserRow } from '../queries/rows';
import { findUserByApiKey, findUsersForLogin, type LoginCandidate } from '../queries/auth';
import { rememberRealm } from '../queries/realms';
import { rememberMemberships } from '../access/viewer';

/**
 * HTTP Basic authentication with the user's email and API key, answering as
 * Zulip does: every failure is a 401 with `WWW-Authenticate: Basic realm="zulip"`
 * except a non-Basic scheme, which is a 400.
 */
export async function authenticateBasic(db: Knex, header: string | undefined, host: string | undefined, prefetchViewer = false): Promise<UserRow> {
  if (!header) throw new UnauthorizedError('Not logged in: API authentication or user session required');
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'basic') throw new ApiError('This endpoint requires HTTP basic authentication.');
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new UnauthorizedError('Invalid authorization header for basic auth');
  const email = decoded.slice(0, colon);
  const apiKey = decoded.slice(colon + 1);
  if (apiKey.length !== 32) throw new UnauthorizedError('Malformed API key');
  const found = await findUserByApiKey(db, apiKey, hostLabel(host), prefetchViewer);
  if (!found || !constantTimeEqual(found.user.api_key, apiKey) || !addressMatches(found.user, email)) {
    throw new UnauthorizedError('Invalid API key');
  }
  const { user, realm } = found;
  if (addressedRealm(user, hostLabel(host)) !== user.realm_string_id) throw new UnauthorizedError('Invalid API key');
  if (realm.deactivated) throw new UnauthorizedError('This organization has been deactivated');
  if (!user.is_active) throw new UnauthorizedError('Account is deactivated');
  rememberRealm(user, realm);
  if (found.memberships) rememberMemberships(user, found.memberships);
  return user;
}

/** The real address or the API email (a user<id>@host placeholder when the address is hidden), in any case. */
function addressMatches(user: UserRow, email: string): boolean {
  const e = email.trim().toLowerCase();
  return user.email_key === e || user.email.toLowerCase() === e;
}

const hostLabel = (host: string | undefined) => (host ?? '').split(':')[0]!.split('.')[0]!.toLowerCase();

/** The string_id of the organization the host addresses (see resolveUser), or undefined for none. */
function addressedRealm(c: Pick<LoginCandidate, 'host_realm_exists' | 'root_realm_exists' | 'realm_count' | 'realm_string_id'>, label: string) {
  return c.host_realm_exists ? label : c.root_realm_exists ? '' : c.realm_count === 1 ? c.realm_string_id : undefined;
}

/**
 * The organization a request addresses decides which account an address
 * means: the one whose subdomain is the host's first label; for any other
 * host the root organization (empty subdomain), or the only organization
 * there is. An account elsewhere does not authenticate here (Zulip: "Account
 * is not associated with this subdomain").
 */
export async function resolveUser(
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
