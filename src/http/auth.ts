import type { Caches } from '../cache';
import { constantTimeEqual } from '../domain/secrets';
import { BotType } from '../domain/users';
import { ApiError, UnauthorizedError } from '../errors';
import type { UserRow } from '../queries/rows';
import { addressedRealm } from '../access/addressed-realm';
import { hostLabel } from '../domain/realm-address';
import type { Caller } from '../access/viewer';
import type { Knex } from 'knex';
import { hashSessionKey, readCookie, SESSION_ACTIVITY_INTERVAL_MS, SESSION_COOKIE } from '../domain/sessions';
import { touchSession, type SessionLookup } from '../queries/sessions';

const NOT_LOGGED_IN = 'Not logged in: API authentication or user session required';

/**
 * HTTP Basic authentication with the user's email and API key, answering as
 * Zulip does: every failure is a 401 with `WWW-Authenticate: Basic realm="zulip"`
 * except a non-Basic scheme, which is a 400. The caller comes back with what
 * was read on the way (organization, memberships): the request's `Caller`.
 */
export async function authenticateBasic(
  caches: Caches,
  header: string | undefined,
  host: string | undefined,
  externalUrl: string,
  opts: { allowIncomingWebhooks?: boolean } = {},
): Promise<Caller> {
  if (!header) throw new UnauthorizedError(NOT_LOGGED_IN);
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'basic') throw new ApiError('This endpoint requires HTTP basic authentication.');
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new UnauthorizedError('Invalid authorization header for basic auth');
  return authenticateApiKey(caches, decoded.slice(colon + 1), decoded.slice(0, colon), host, externalUrl, opts);
}

/**
 * The account of an API key, checked as for every request: the key of an
 * active account of an active organization that the request's host
 * addresses. `email`, when given (HTTP Basic), must be the account's
 * address; incoming webhooks may send the key alone (`api_key`).
 */
export async function authenticateApiKey(
  caches: Caches,
  apiKey: string,
  email: string | null,
  host: string | undefined,
  externalUrl: string,
  opts: { allowIncomingWebhooks?: boolean } = {},
): Promise<Caller> {
  if (apiKey.length !== 32) throw new UnauthorizedError('Malformed API key');
  // From the caches (src/cache/): no statement at all for a caller seen
  // recently. Every change to the account, its organization or its
  // memberships drops the entry before the change is announced.
  const caller = await caches.callers.get(apiKey);
  if (!caller || !constantTimeEqual(caller.user.api_key, apiKey) || (email !== null && !addressMatches(caller.user, email))) {
    throw new UnauthorizedError('Invalid API key');
  }
  const [realm, subdomains] = await Promise.all([caches.realms.get(caller.user.realm_id), caches.realms.subdomains()]);
  if (!realm) throw new UnauthorizedError('Invalid API key');
  const label = hostLabel(host, externalUrl);
  const addressed = addressedRealm(
    {
      host_realm_exists: subdomains.has(label),
      root_realm_exists: subdomains.has(''),
      realm_count: subdomains.size,
      realm_string_id: realm.string_id,
    },
    label,
  );
  if (addressed !== realm.string_id) throw new UnauthorizedError('Invalid API key');
  // Zulip's documentation gives these USER_DEACTIVATED and REALM_DEACTIVATED, but its
  // server turns every error of an API key's check into a 401 UNAUTHORIZED with the same
  // message (authenticated_rest_api_view), and clients see that. The documented codes
  // are POST /fetch_api_key's (src/actions/login.ts).
  if (realm.deactivated) throw new UnauthorizedError('This organization has been deactivated');
  if (!caller.user.is_active) throw new UnauthorizedError('Account is deactivated');
  // An incoming webhook bot may only send messages (Zulip's validate_api_key; its
  // authenticated_rest_api_view turns the refusal into a 401 like every other here).
  // The file routes and tus uploads call this without the option: refused too, as in Zulip.
  if (caller.user.bot_type === BotType.INCOMING_WEBHOOK && !opts.allowIncomingWebhooks) {
    throw new UnauthorizedError('This API is not available to incoming webhook bots.');
  }
  // A copy per request: the request may change its user object.
  const user: UserRow = { ...caller.user };
  return { user, realm, groups: caller.groups, subscribedRecipients: caller.subscribedRecipients };
}

/** The real address or the API email (a user<id>@host placeholder when the address is hidden), in any case. */
function addressMatches(user: UserRow, email: string): boolean {
  const e = email.trim().toLowerCase();
  return user.email_key === e || user.email.toLowerCase() === e;
}

/** A request's browser session, with its caller. */
export interface SessionCaller {
  caller: Caller;
  session: SessionLookup;
}

/**
 * The browser session of a request's `sessionid` cookie (ADR 0053): the row
 * of the key's SHA-256, from the session cache (src/cache/sessions.ts), which
 * every deletion of a session empties on every node (logout, revocation, a
 * password change, a deactivation); then the checks of an API key (active account of an active
 * organization the host addresses; incoming webhook bots, which never log
 * in, refused). Any failure is Zulip's one answer to a request without a
 * session: 401 "Not logged in" with `WWW-Authenticate: Session`, since
 * Django's session middleware simply finds no user. The session's activity
 * is recorded at most once a minute.
 */
export async function authenticateSession(
  db: Knex,
  caches: Caches,
  cookieHeader: string | undefined,
  host: string | undefined,
  externalUrl: string,
  now: number = Date.now(),
): Promise<SessionCaller> {
  const key = readCookie(cookieHeader, SESSION_COOKIE);
  const session = key ? await caches.sessions.get(hashSessionKey(key)) : undefined;
  if (!session || session.expires_at <= now) throw new UnauthorizedError(NOT_LOGGED_IN, 'UNAUTHORIZED', 'Session');
  let caller: Caller;
  try {
    caller = await authenticateApiKey(caches, session.api_key, null, host, externalUrl);
  } catch (err) {
    if (err instanceof UnauthorizedError) throw new UnauthorizedError(NOT_LOGGED_IN, 'UNAUTHORIZED', 'Session');
    throw err;
  }
  if (session.last_active_at <= now - SESSION_ACTIVITY_INTERVAL_MS) {
    // This process's copy moves first: concurrent requests of the session write once.
    session.last_active_at = now;
    await touchSession(db, session.id, now, now - SESSION_ACTIVITY_INTERVAL_MS);
  }
  return { caller, session };
}

/**
 * The caller of a file request (/user_uploads, /avatar): HTTP Basic when the
 * request carries an Authorization header, else the browser session, as
 * Zulip's file views accept either. No CSRF token: these are GETs.
 */
/**
 * Whether a request that may use either is the browser session's: no
 * Authorization header, and a session cookie. The one place that choice is made.
 */
export function usesSession(headers: { authorization?: string; cookie?: string }): boolean {
  return !headers.authorization && Boolean(readCookie(headers.cookie, SESSION_COOKIE));
}

export async function authenticateBasicOrSession(
  db: Knex,
  caches: Caches,
  req: { headers: { authorization?: string; cookie?: string; host?: string } },
  externalUrl: string,
): Promise<Caller> {
  if (!usesSession(req.headers)) return authenticateBasic(caches, req.headers.authorization, req.headers.host, externalUrl);
  return (await authenticateSession(db, caches, req.headers.cookie, req.headers.host, externalUrl)).caller;
}
