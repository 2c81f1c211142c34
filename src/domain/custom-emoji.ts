import { ApiError } from '../errors';

/** Zulip's MAX_EMOJI_FILE_SIZE_MIB default: larger uploads are refused before any decoding. */
export const MAX_EMOJI_FILE_SIZE_MIB = 5;
/** Custom emoji are shrunk to fit this square (Zulip's DEFAULT_EMOJI_SIZE). */
export const EMOJI_SIZE = 64;
/** realm_emoji.name's column width. */
export const MAX_EMOJI_NAME_LENGTH = 60;

/**
 * The image types an emoji may be (Zulip accepts the thumbnailable types a
 * browser shows inline) and the extension its file gets.
 */
export const EMOJI_IMAGE_TYPES: ReadonlyMap<string, 'png' | 'gif' | 'jpg' | 'webp' | 'avif'> = new Map([
  ['image/png', 'png'],
  ['image/gif', 'gif'],
  ['image/jpeg', 'jpg'],
  ['image/webp', 'webp'],
  ['image/avif', 'avif'],
] as const);

/** Content type of a stored emoji file, by its extension (the still image is always PNG). */
export function emojiContentType(fileName: string): string | null {
  const ext = fileName.slice(fileName.lastIndexOf('.') + 1);
  for (const [type, e] of EMOJI_IMAGE_TYPES) if (e === ext) return type;
  return null;
}

/** Zulip turns spaces in the requested name into underscores after trimming it. */
export function normalizeEmojiName(raw: string): string {
  return raw.trim().replaceAll(' ', '_');
}

/**
 * Zulip's name rule: lowercase ASCII letters, digits, '-' and '_', not
 * ending in '-' or '_' (its own message for that case). The length cap is
 * the column's; Zulip's model field refuses the same.
 */
export function checkValidEmojiName(name: string): void {
  if (name === '') throw new ApiError('Emoji name is missing');
  if (/^[0-9a-z\-_]+$/.test(name)) {
    if (/[-_]$/.test(name)) throw new ApiError('Emoji names must end with either a letter or digit.');
    if (name.length > MAX_EMOJI_NAME_LENGTH) throw new ApiError(`Emoji name is too long (limit: ${MAX_EMOJI_NAME_LENGTH} characters).`);
    return;
  }
  throw new ApiError('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
}

/** Zulip's BadImageError: its own error code, so clients can tell a bad image from other refusals. */
export const badImage = (msg: string) => new ApiError(msg, 'BAD_IMAGE');

/**
 * Storage keys of an organization's emoji: `emoji/<realm>/<file>` for the
 * image, `emoji/<realm>/still/<file>.png` for an animated one's still frame,
 * `emoji/<realm>/<file>.original` for the upload as sent (kept, as Zulip
 * keeps it). File names are ours (random hex plus a known extension), so the
 * shape check below admits nothing a client could steer elsewhere.
 */
export const emojiKey = (realmId: number, fileName: string) => `emoji/${realmId}/${fileName}`;
export const emojiStillKey = (realmId: number, fileName: string) => `emoji/${realmId}/still/${stillName(fileName)}`;
export const emojiOriginalKey = (realmId: number, fileName: string) => `emoji/${realmId}/${fileName}.original`;

const EMOJI_KEY = /^emoji\/[1-9][0-9]{0,9}\/(?:still\/[0-9a-f]{16}\.png|[0-9a-f]{16}\.(?:png|gif|jpg|webp|avif)(?:\.original)?)$/;

export function isEmojiKey(key: string): boolean {
  return EMOJI_KEY.test(key);
}

const stillName = (fileName: string) => `${fileName.slice(0, fileName.lastIndexOf('.'))}.png`;

/** Public URLs, where Zulip's local upload backend serves emoji (no credentials needed). */
export const emojiSourceUrl = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;
export const emojiStillUrl = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/still/${stillName(fileName)}`;
