import { ApiError } from '../errors';

/**
 * Zulip's limit on one bot's storage (settings.USER_STATE_SIZE_LIMIT), in
 * characters: the lengths of every key and value it stores, added up.
 */
export const BOT_STORAGE_SIZE_LIMIT = 10_000_000;

/**
 * Parley's limit on the keys one GET or DELETE /bot_storage names (Zulip has
 * none; the contract's maxItems). The keys a PUT sets are bounded by the
 * request body's size and the storage limit.
 */
export const MAX_BOT_STORAGE_KEYS = 10_000;

/**
 * A string's length as Zulip counts it (Python's len: Unicode code points),
 * where JavaScript's counts UTF-16 units, two for a character outside the
 * Basic Multilingual Plane.
 */
export function characterCount(s: string): number {
  let pairs = 0;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return s.length - pairs;
}

/** The size one entry takes from its bot's storage: its key's length and its value's. */
export const entrySize = (key: string, value: string): number => characterCount(key) + characterCount(value);

/**
 * The refusal of a change that would leave the bot's storage over the limit
 * (Zulip's wording, which names the excess). Exactly at the limit is allowed.
 */
export function checkBotStorageSize(newSize: number): void {
  if (newSize > BOT_STORAGE_SIZE_LIMIT) {
    throw new ApiError(
      `Request exceeds storage limit by ${newSize - BOT_STORAGE_SIZE_LIMIT} characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`,
    );
  }
}

/** Zulip's answer to a GET or DELETE naming a key the bot does not store. */
export const keyDoesNotExist = () => new ApiError('Key does not exist.');

/**
 * Since feature level 494, bot storage is for bot accounts: a human caller
 * is refused before any parameter is looked at further.
 */
export function checkBotCaller(user: { is_bot: boolean }): void {
  if (!user.is_bot) throw new ApiError('Must be a bot user');
}
