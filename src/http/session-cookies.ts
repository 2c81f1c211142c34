import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import { CSRF_COOKIE, readCookie, SESSION_COOKIE } from '../domain/sessions';
import { endBrowserSession, startBrowserSession } from '../handlers/sessions';

/**
 * The cookies of a browser session (ADR 0053), with the flags of Zulip's
 * settings: `sessionid` HttpOnly (no script reads it), `csrftoken` readable
 * by the page's script (which sends it back in X-CSRFToken); both
 * SameSite=Lax, Path=/, Secure when the server is reached over https (its
 * EXTERNAL_URL, or this request), and alive as long as the session.
 */
function cookie(name: string, value: string, maxAge: number, httpOnly: boolean, secure: boolean): string {
  const expires = new Date(Date.now() + maxAge * 1000).toUTCString();
  return [
    `${name}=${value}`,
    `Max-Age=${maxAge}`,
    `Expires=${maxAge === 0 ? 'Thu, 01 Jan 1970 00:00:00 GMT' : expires}`,
    'Path=/',
    'SameSite=Lax',
    ...(httpOnly ? ['HttpOnly'] : []),
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

function isSecure(req: Request, externalUrl: string): boolean {
  return req.secure || externalUrl.startsWith('https:');
}

/**
 * Logs the user in: a new session and its two cookies on the response. A
 * session the browser already held ends first, as Django's login flushes
 * (or cycles) the request's session: a key set before the login, by
 * whoever, never becomes a logged-in one.
 */
export async function logIn(ctx: AppContext, req: Request, res: Response, user: { id: number; realm_id: number }): Promise<void> {
  const previous = readCookie(req.headers.cookie, SESSION_COOKIE);
  if (previous) await endBrowserSession(ctx, previous);
  const session = await startBrowserSession(ctx, user, { ip: req.ip, userAgent: req.headers['user-agent'] });
  const secure = isSecure(req, ctx.config.externalUrl);
  res.append('Set-Cookie', [
    cookie(SESSION_COOKIE, session.key, session.maxAgeSeconds, true, secure),
    cookie(CSRF_COOKIE, session.csrfToken, session.maxAgeSeconds, false, secure),
  ]);
}

/** Both cookies cleared (logout). */
export function clearSessionCookies(req: Request, res: Response, externalUrl: string): void {
  const secure = isSecure(req, externalUrl);
  res.append('Set-Cookie', [cookie(SESSION_COOKIE, '', 0, true, secure), cookie(CSRF_COOKIE, '', 0, false, secure)]);
}

/**
 * Where a login goes next: a `next` that is a path of this site (one
 * leading `/`, not `//` or `/\`, which browsers take for another host, and
 * no control character), else `/`.
 */
export function nextPath(next: string | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(next)) return '/';
  return next;
}
