import { realmIconUrl } from '../serializers/realm-images';
import type { Caller } from './viewer';

/**
 * GET /realm/icon: where the caller's organization icon is (the uploaded
 * image, or the default identicon). As in Zulip's get_icon_backend, the
 * request's query string is added to the target as the client sent it, after
 * the URL's own query (`?version=<n>`) when it has one.
 */
export function getRealmIconRedirect(viewer: Caller, query: string): string {
  const url = realmIconUrl(viewer.realm);
  if (!query) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${query}`;
}
