import type { Knex } from 'knex';
import { constantTimeEqual } from '../domain/secrets';
import { ApiError, UnauthorizedError } from '../errors';
import type { UserRow } from '../queries/rows';
import { findUsersForLogin } from '../queries/auth';

/**
 * HTTP Basic authentication with the user's email and API key, answering as
 * Zulip does: every failure is a 401 with `WWW-Authenticate: Basic realm="zulip"`
 * except a non-Basic scheme, which is a 400.
 */
export async function authenticateBasic(db: Knex, header: string | undefined, host: string | undefined): Promise<UserRow> {
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
  const user = await resolveUser(db, email, host);
  if (!user || !constantTimeEqual(user.api_key, apiKey)) throw new UnauthorizedError('Invalid API key');
  if (user.realm_deactivated) throw new UnauthorizedError('This organization has been deactivated');
  if (!user.is_active) throw new UnauthorizedError('Account is deactivated');
  return user;
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
  const label = (host ?? '').split(':')[0]!.split('.')[0]!.toLowerCase();
  const candidates = await findUsersForLogin(db, email, label);
  const first = candidates[0];
  if (!first) return undefined;
  const addressed = first.host_realm_exists ? label : first.root_realm_exists ? '' : first.realm_count === 1 ? first.realm_string_id : undefined;
  return candidates.find((u) => u.realm_string_id === addressed);
}
