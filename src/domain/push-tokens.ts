import { ApiError } from '../errors';

/** Zulip's bound on a legacy push token, in characters (code points). */
export const MAX_PUSH_TOKEN_LENGTH = 4096;

/**
 * Hex as Python's bytes.fromhex reads it, which is how Zulip decides an
 * APNs token is valid: pairs of hex digits, with ASCII whitespace allowed
 * between pairs (never inside one). A token of whitespace alone decodes to
 * nothing and is accepted, as there.
 */
const HEX_PAIRS = /^(?:[ \t\n\r\v\f]*[0-9a-fA-F]{2})*[ \t\n\r\v\f]*$/;

/** Zulip's validate_token for FCM tokens: any text of 1 to 4,096 characters; stored as sent. */
export function checkFcmToken(token: string): void {
  let length = 0;
  for (const _ of token) if (++length > MAX_PUSH_TOKEN_LENGTH) break;
  if (length === 0 || length > MAX_PUSH_TOKEN_LENGTH) throw new ApiError('Empty or invalid length token');
}

/**
 * Zulip's validate_token for APNs tokens: the length as for FCM, then hex.
 * (Zulip before its E2EE push era decoded APNs tokens as lenient Base64, so
 * "apple-tokenbb" passed; its server since reads them with bytes.fromhex.)
 */
export function checkApnsToken(token: string): void {
  checkFcmToken(token);
  if (!HEX_PAIRS.test(token)) throw new ApiError('Invalid APNS token');
}

/** Zulip's human_users_only: the legacy push endpoints refuse bots. */
export function checkHumanUser(user: { is_bot: boolean }): void {
  if (user.is_bot) throw new ApiError('This endpoint does not accept bot requests.');
}

export const PushTokenKind = { APNS: 'apns', FCM: 'fcm' } as const;
