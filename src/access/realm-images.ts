import { realmIconUrl, realmLogoUrl } from '../serializers/realm-images';
import type { Caller } from './viewer';

/**
 * The redirect target of GET /realm/icon and GET /realm/logo: as in Zulip's
 * get_icon_backend and get_logo_backend (append_url_query_string), the
 * request's query string is added to the image's URL as the client sent it,
 * after the URL's own query (`?version=<n>`) when it has one.
 */
function withQuery(url: string, query: string): string {
  if (!query) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${query}`;
}

/** GET /realm/icon: where the caller's organization icon is (the uploaded image, or the default identicon). */
export function getRealmIconRedirect(viewer: Caller, query: string): string {
  return withQuery(realmIconUrl(viewer.realm), query);
}

/**
 * GET /realm/logo: where the caller's organization wide logo is, the
 * dark-theme one with `night` (the uploaded image, or the default logo the
 * register response names). `night` itself stays in the query string that
 * is passed on, as in Zulip.
 */
export function getRealmLogoRedirect(viewer: Caller, night: boolean, query: string): string {
  return withQuery(realmLogoUrl(viewer.realm, night), query);
}
