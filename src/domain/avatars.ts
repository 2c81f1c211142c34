import { createHmac } from 'node:crypto';
import { ApiError } from '../errors';

/** Zulip's sizes: the avatar shown everywhere, and the medium one of profile cards. */
export const AVATAR_SIZE = 100;
export const MEDIUM_AVATAR_SIZE = 500;
/** Zulip's default MAX_AVATAR_FILE_SIZE_MIB. */
export const MAX_AVATAR_FILE_SIZE_MIB = 5;

/** avatar_source values, as Zulip: Gravatar, or uploaded by the user. */
export const AvatarSource = { GRAVATAR: 'G', UPLOADED: 'U' } as const;

export type AvatarVariant = 'small' | 'medium' | 'original';

/**
 * The file name stem of an uploaded avatar: an HMAC of the user id and the
 * new avatar version under the server secret. Zulip salts a hash of the user
 * id for the same reason — nobody can guess the URL of an avatar from a user
 * id — and the version in it gives each upload a URL of its own, so no cache
 * ever serves an old image under a new URL.
 */
export function avatarHash(secret: Buffer, userId: number, version: number): string {
  return createHmac('sha1', secret).update(`avatar:${userId}:${version}`).digest('hex');
}

const SUFFIX: Record<AvatarVariant, string> = { small: '.png', medium: '-medium.png', original: '.original' };

/** The storage key of one variant: `avatars/<realm_id>/<hash><suffix>`. */
export function avatarKey(realmId: number, hash: string, variant: AvatarVariant): string {
  return `avatars/${realmId}/${hash}${SUFFIX[variant]}`;
}

const AVATAR_KEY = /^avatars\/[1-9][0-9]{0,9}\/[0-9a-f]{40}(?:\.png|-medium\.png|\.original)$/;

/** Whether a storage key is an avatar's, checked before any file-system access: nothing else can pass. */
export function isAvatarKey(key: string): boolean {
  return AVATAR_KEY.test(key);
}

/**
 * The storage key behind a public avatar URL path (`<realm_id>/<file>` after
 * /user_avatars/), or null. Only the two served sizes: the original upload
 * is kept but never served, as in Zulip.
 */
export function servedAvatarKey(realm: string, file: string): string | null {
  const key = `avatars/${realm}/${file}`;
  return isAvatarKey(key) && !key.endsWith('.original') ? key : null;
}

/** The public URL of an uploaded avatar, with Zulip's `version` query so that a change busts caches. */
export function uploadedAvatarUrl(realmId: number, hash: string, version: number, medium: boolean): string {
  return `/user_avatars/${avatarKey(realmId, hash, medium ? 'medium' : 'small').slice('avatars/'.length)}?version=${version}`;
}

/** Zulip answers both no file and several files with this one message. */
export const notOneAvatar = () => new ApiError('You must upload exactly one avatar.');
export const avatarTooLarge = () => new ApiError(`Uploaded file is larger than the allowed limit of ${MAX_AVATAR_FILE_SIZE_MIB} MiB`);
export const badImage = () => new ApiError('Could not decode image; did you upload an image file?');
