import { createHash } from 'node:crypto';
import type { Schema } from '../contract';
import { IconSource, LogoSource, realmImageHash, uploadedRealmImageUrl, type RealmImageKind } from '../domain/realm-images';
import type { RealmRow } from '../queries/rows';

type ImageColumns = Pick<
  RealmRow,
  'id' | 'string_id' | 'icon_source' | 'icon_version' | 'logo_source' | 'logo_version' | 'night_logo_source' | 'night_logo_version'
>;

/** Zulip's default organization icon: a Gravatar identicon of the subdomain. */
function defaultIconUrl(realm: Pick<RealmRow, 'string_id'>): string {
  const hash = createHash('md5').update(realm.string_id.toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon`;
}

function uploadedUrl(realm: ImageColumns, kind: RealmImageKind, version: number): string {
  return uploadedRealmImageUrl(realm.id, realmImageHash(realm.id, kind, version), version);
}

/** The icon's URL: the uploaded one, or Zulip's default, a Gravatar identicon of the subdomain. */
export function realmIconUrl(realm: ImageColumns): string {
  return realm.icon_source === IconSource.UPLOADED ? uploadedUrl(realm, 'icon', realm.icon_version) : defaultIconUrl(realm);
}

/**
 * A wide logo's URL (the dark-theme one with `night`). Zulip's default logo
 * is a file of its own web app, which Parley does not serve: the default
 * icon stands in (the default one, not an uploaded icon, so that an icon
 * change never changes a logo URL without a logo event).
 */
export function realmLogoUrl(realm: ImageColumns, night: boolean): string {
  const source = night ? realm.night_logo_source : realm.logo_source;
  if (source !== LogoSource.UPLOADED) return defaultIconUrl(realm);
  return uploadedUrl(realm, night ? 'night_logo' : 'logo', night ? realm.night_logo_version : realm.logo_version);
}

/** The data of Zulip's `realm` update_dict event for the icon. */
export function iconEventData(realm: ImageColumns): Schema<'RealmUpdateDictData'> {
  return { icon_url: realmIconUrl(realm), icon_source: realm.icon_source as 'G' | 'U' };
}

/** The data of Zulip's `realm` update_dict event for a logo (get_realm_logo_data). */
export function logoEventData(realm: ImageColumns, night: boolean): Schema<'RealmUpdateDictData'> {
  return night
    ? { night_logo_url: realmLogoUrl(realm, true), night_logo_source: realm.night_logo_source as 'D' | 'U' }
    : { logo_url: realmLogoUrl(realm, false), logo_source: realm.logo_source as 'D' | 'U' };
}
