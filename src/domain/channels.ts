import { ApiError } from '../errors';

export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;
/** Most users one request may subscribe or unsubscribe (the contract's Principals; a Parley limit). */
export const MAX_PRINCIPALS = 10_000;

/** Zulip's channel name rules: trimmed, non-empty, ≤ 60 characters, no control or private-use characters. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw new ApiError("Channel name can't be empty.");
  const chars = [...name];
  if (chars.length > MAX_CHANNEL_NAME_LENGTH) {
    throw new ApiError(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  }
  chars.forEach((c, i) => {
    if (/[\p{Cc}\p{Cs}\p{Co}\p{Cn}]/u.test(c)) throw new ApiError(`Invalid character in channel name, at position ${i + 1}.`);
  });
  return name;
}

export const channelNameKey = (name: string) => name.trim().toLowerCase();

/** A subscription color as Zulip accepts it: `#` and six hex digits. */
export const isHexColor = (value: string) => /^#[0-9a-fA-F]{6}$/.test(value);

/** Zulip's palette for new subscriptions' colors, handed out in turn. */
export const SUBSCRIPTION_COLORS = [
  '#76ce90',
  '#fae589',
  '#a6c7e5',
  '#e79ab5',
  '#bfd56f',
  '#f4ae55',
  '#b0a5fd',
  '#addfe5',
  '#f5ce6e',
  '#c2726a',
  '#94c849',
  '#bd86e5',
  '#ee7e4a',
  '#a6dcbf',
  '#95a5fd',
  '#53a063',
  '#9987e1',
  '#e4523d',
  '#c2c2c2',
  '#4f8de4',
  '#c6a8ad',
  '#e7cc4d',
  '#c8bebf',
  '#a47462',
];
