import crypto from 'node:crypto';
import { generateApiKey } from './secrets';

/**
 * Browser sessions (docs/architecture/sessions.md, ADR 0053): the cookie
 * names Django and so Zulip use, the key and CSRF token formats, and the
 * CSRF check's refusals in Django's words.
 */

/** The session key's cookie: HttpOnly, never readable by a page's script. */
export const SESSION_COOKIE = 'sessionid';
/** The CSRF token's cookie: readable by the page's script, which sends it back in X-CSRFToken. */
export const CSRF_COOKIE = 'csrftoken';
/** A session's last activity is written at most this often. */
export const SESSION_ACTIVITY_INTERVAL_MS = 60_000;
/** How much of a User-Agent header a session keeps. */
export const USER_AGENT_MAX = 255;

/** A session key: 32 random bytes, base64url (43 characters). Only its SHA-256 is stored. */
export function newSessionKey(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** A session's CSRF token: 32 letters and digits, the length and alphabet of Django's CSRF secret. */
export function newCsrfToken(): string {
  return generateApiKey(32);
}

export function hashSessionKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The value of one cookie in a Cookie header (the first of that name), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value;
  }
  return undefined;
}

/**
 * Why a request's CSRF token is refused, in the words of Django's
 * CsrfViewMiddleware (Zulip answers "CSRF error: " and this reason), or
 * null when it matches the session's. `source` is where it came from: the
 * X-CSRFToken header (Django names it 'X-Csrftoken') or a form's
 * csrfmiddlewaretoken field ('POST').
 */
export function csrfRefusal(sent: string | undefined, expected: string, source: 'header' | 'form'): string | null {
  if (sent === undefined || sent === '') return 'CSRF token missing.';
  const from = source === 'header' ? "the 'X-Csrftoken' HTTP header" : 'POST';
  if (sent.length !== expected.length) return `CSRF token from ${from} has incorrect length.`;
  if (!/^[A-Za-z0-9]+$/.test(sent)) return `CSRF token from ${from} has invalid characters.`;
  const a = Buffer.from(sent, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return crypto.timingSafeEqual(a, b) ? null : `CSRF token from ${from} incorrect.`;
}

/** Methods that change nothing, which need no CSRF token (RFC 9110's safe methods, as Django's list). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
