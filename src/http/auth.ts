import type { Knex } from 'knex';
import { constantTimeEqual } from '../domain/secrets';
import { ApiError, UnauthorizedError } from '../errors';
import type { UserRow } from '../queries/rows';
import { findUserByApiKey } from '../queries/auth';
import { rememberRealm } from '../queries/realms';
import { addressedRealm, hostLabel } from '../access/addressed-realm';
import { rememberMemberships } from '../access/viewer';

/**
 * HTTP Basic authentication with the user's email and API key, answering as
 * Zulip does: every failure is a 401 with `WWW-Authenticate: Basic realm="zulip"`
 * except a non-Basic scheme, which is a 400.
 */
export async function authenticateBasic(
  db: Knex,
  header: string | undefined,
  host: string | undefined,
  prefetchViewer = false,
): Promise<UserRow> {
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
