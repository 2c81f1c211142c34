import { createHash } from 'node:crypto';
import { ApiError } from '../errors';
import { avatarKey, uploadedAvatarUrl, type AvatarVariant } from './avatars';

/** Zulip's icon size: a square of DEFAULT_AVATAR_SIZE. */
export const REALM_ICON_SIZE = 100;
/** Zulip's logo box: eight icons wide, one high; a logo is shrunk to fit inside it. */
export const REALM_LOGO_WIDTH = 800;
export const REALM_LOGO_HEIGHT = 100;
/** Zulip's default MAX_ICON_FILE_SIZE_MIB and MAX_LOGO_FILE_SIZE_MIB (register sends both). */
export const MAX_ICON_FILE_SIZE_MIB = 5;
export const MAX_LOGO_FILE_SIZE_MIB = 5;

/** Zulip's Realm.ICON_FROM_GRAVATAR / ICON_UPLOADED and LOGO_DEFAULT / LOGO_UPLOADED. */
export const IconSource = { GRAVATAR: 'G', UPLOADED: 'U' } as const;
export const LogoSource = { DEFAULT: 'D', UPLOADED: 'U' } as const;

/** The three images an organization may upload. */
export type RealmImageKind = 'icon' | 'logo' | 'night_logo';

/**
 * The file name stem of one version of an organization image: a SHA-1 of the
 * organization, the image and its version (no secret: an organization's icon
 * and logos are public, and Zulip's URLs for them are guessable too). Zulip
 * overwrites realm/icon.png on each upload and relies on `?version=` alone;
 * here each version has a name of its own, which (a) lets the image be served
 * by the avatar route under its "cache for good" headers without a stale
 * cache ever answering for a newer version, and (b) gives the stored file a
 * key of the one shape the storage accepts for avatars.
 */
export function realmImageHash(realmId: number, kind: RealmImageKind, version: number): string {
  return createHash('sha1').update(`realm-${kind}:${realmId}:${version}`).digest('hex');
}

/** The storage key of an organization image version: 'small' is the served PNG, 'original' the upload as sent. */
export function realmImageKey(realmId: number, hash: string, variant: Extract<AvatarVariant, 'small' | 'original'>): string {
  return avatarKey(realmId, hash, variant);
}

/** The public URL of an uploaded organization image, with Zulip's `version` query. */
export function uploadedRealmImageUrl(realmId: number, hash: string, version: number): string {
  return uploadedAvatarUrl(realmId, hash, version, false);
}

/** Zulip answers both no file and several files with these messages. */
export const notOneIcon = () => new ApiError('You must upload exactly one icon.');
export const notOneLogo = () => new ApiError('You must upload exactly one logo.');
export const imageTooLarge = (limitMib: number) => new ApiError(`Uploaded file is larger than the allowed limit of ${limitMib} MiB`);
