import { isIP } from 'node:net';

/**
 * Where each organization is reached, and which organization a request's
 * Host addresses: the two directions of one mapping, Zulip's subdomains.
 *
 * - The root organization (string id "") is at EXTERNAL_URL itself.
 * - Organization `acme` is at EXTERNAL_URL with `acme.` before its host name,
 *   scheme, port and path kept: http://chat.example.com:8080 gives
 *   http://acme.chat.example.com:8080.
 * - A request addresses the organization named by its host's first label;
 *   EXTERNAL_URL's own host addresses the root organization whatever its first
 *   label is (EXTERNAL_URL=https://chat.example.com is the root organization's
 *   even beside an organization `chat`). What the label names when no
 *   organization has it is src/access/addressed-realm.ts's to decide.
 *
 * An IP address has no subdomains. The loopback and wildcard addresses
 * (EXTERNAL_URL's default is http://127.0.0.1:9991) put organizations under
 * `localhost` instead, which browsers and curl resolve to the loopback
 * address for every name below it (RFC 6761): http://acme.localhost:9991.
 * Any other address gives a name no resolver knows: an operator serving
 * several organizations sets EXTERNAL_URL to a host name with wildcard DNS.
 */

/** Addresses whose organizations live under `localhost`: a client reaching one of them reaches the others through the loopback. */
const LOCAL_ADDRESSES = new Set(['127.0.0.1', '::1', '0.0.0.0', '::']);

/** The organization's URL: what realm_url, a zuliprc's site and links into the organization start with. */
export function realmUrl(externalUrl: string, stringId: string): string {
  if (stringId === '') return externalUrl;
  const u = new URL(externalUrl);
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.protocol}//${realmHost(externalUrl, stringId)}${u.port ? `:${u.port}` : ''}${path}`;
}

/** The organization's host name, without the port: realm_bot_domain and the domain of placeholder addresses. */
export function realmHost(externalUrl: string, stringId: string): string {
  const hostname = new URL(externalUrl).hostname;
  if (stringId === '') return hostname;
  const address = hostname.replace(/^\[(.*)\]$/, '$1');
  return `${stringId}.${LOCAL_ADDRESSES.has(address) ? 'localhost' : hostname}`;
}

/** Whether organizations other than the root have a URL that resolves (false: EXTERNAL_URL is an address other than the loopback's). */
export function hasSubdomains(externalUrl: string): boolean {
  const address = new URL(externalUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(address) === 0 || LOCAL_ADDRESSES.has(address);
}

/**
 * An absolute path (`/user_avatars/...`) as a URL on the organization's
 * site, as `new URL(path, realmUrl)` would give but without parsing the
 * organization's URL, which need not be one WHATWG accepts (see hasSubdomains).
 */
export function urlOnSite(siteUrl: string, absolutePath: string): string {
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(siteUrl)?.[0] ?? siteUrl;
  return origin + absolutePath;
}

// EXTERNAL_URL's host (with its port), computed once per value: hostLabel runs on every request.
let rootUrl = '';
let rootHost = '';

/**
 * The string id a Host header names: "" (the root organization) for
 * EXTERNAL_URL's own host, else its first label (up to the first dot, or the
 * colon of a port), lower-cased.
 */
export function hostLabel(host: string | undefined, externalUrl: string): string {
  if (!host) return '';
  if (externalUrl !== rootUrl) {
    rootHost = new URL(externalUrl).host;
    rootUrl = externalUrl;
  }
  // No arrays per request: indexes and one slice.
  if (host.length === rootHost.length && host.toLowerCase() === rootHost) return '';
  let end = host.length;
  const dot = host.indexOf('.');
  if (dot >= 0) end = dot;
  const colon = host.indexOf(':');
  if (colon >= 0 && colon < end) end = colon;
  return host.slice(0, end).toLowerCase();
}
