import { ApiError } from '../errors';

/**
 * Rules of POST /mobile_push/register (end-to-end encrypted push), as Zulip
 * checks them. Pure: parsing and shape only, no state.
 */

/** The first byte of push_key naming secret-box (XSalsa20-Poly1305) with a 32-byte key. */
export const PUSH_KEY_SECRETBOX = 0x31;
export const SECRETBOX_KEY_BYTES = 32;
/** token_id is the first 8 bytes of the SHA-256 of the device token. */
export const TOKEN_ID_BYTES = 8;

/**
 * Standard Base64 (RFC 4648 section 4) with its padding, as Python's
 * b64decode(validate=True) accepts it: the standard alphabet only (no
 * URL-safe '-' or '_', no whitespace), length a multiple of four.
 */
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of a standard Base64 string, or null when it is not one. */
export function decodeStandardBase64(text: string): Buffer | null {
  return STANDARD_BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}

export interface PushKey {
  /** The 32-byte secret-box key (without the cryptosystem byte). */
  key: Buffer;
  /** The key as sent (Base64 of the prefix byte and the key), as stored. */
  encoded: string;
}

/** Zulip's check_push_key: Base64 of 33 bytes, the first naming secret-box. One message for every failure. */
export function checkPushKey(text: string): PushKey {
  const bytes = decodeStandardBase64(text);
  if (!bytes || bytes.length !== 1 + SECRETBOX_KEY_BYTES || bytes[0] !== PUSH_KEY_SECRETBOX) {
    throw new ApiError('Invalid `push_key`');
  }
  return { key: bytes.subarray(1), encoded: text };
}

/**
 * token_id: Zulip answers malformed Base64 with "`token_id` is not Base64
 * encoded"; it stores the decoded bytes as a signed 64-bit integer, so any
 * other length than 8 bytes cannot name a token and is refused here.
 */
export function checkTokenId(text: string): Buffer {
  const bytes = decodeStandardBase64(text);
  if (!bytes) throw new ApiError('`token_id` is not Base64 encoded');
  if (bytes.length !== TOKEN_ID_BYTES) throw new ApiError('Invalid `token_id`');
  return bytes;
}

/**
 * The form a token_id is stored and reported in: standard Base64 of its 8
 * bytes, as Zulip re-encodes the integer it keeps (so a client comparing the
 * token_id it computed with POST /register's `devices` finds it equal).
 */
export function canonicalTokenId(bytes: Buffer): string {
  return bytes.toString('base64');
}

/**
 * bouncer_public_key and encrypted_push_registration are opaque to the
 * server (only the relay can decrypt the registration); Zulip's relay
 * refuses them with these messages. Parley checks their Base64 before
 * storing anything, so a malformed one fails the request instead of a
 * background registration.
 */
export function checkRelayBlob(name: 'bouncer_public_key' | 'encrypted_push_registration', text: string): void {
  const bytes = decodeStandardBase64(text);
  if (!bytes || bytes.length === 0) throw new ApiError(`Invalid ${name}`);
}

export interface RegistrationFields {
  push_key?: string;
  push_key_id?: number;
  token_kind?: 'fcm' | 'apns';
  token_id?: string;
  bouncer_public_key?: string;
  encrypted_push_registration?: string;
}

/** Which groups a request carries: both (a registration), the key alone or the token alone (a rotation). */
export type RegistrationKind = 'register' | 'rotate-key' | 'rotate-token';

/**
 * A group is either complete or absent. Zulip answers a request with no
 * complete group with the message below; a request with a complete group and
 * part of the other would there be taken as a rotation, silently ignoring the
 * partial group — Parley refuses it with the same message, so a client that
 * forgot a field learns it instead of registering half of what it meant.
 */
export function classifyRegistration(p: RegistrationFields): RegistrationKind {
  const key = [p.push_key, p.push_key_id];
  const token = [p.token_kind, p.token_id, p.bouncer_public_key, p.encrypted_push_registration];
  const complete = (g: unknown[]) => g.every((v) => v !== undefined);
  const partial = (g: unknown[]) => g.some((v) => v !== undefined) && !complete(g);
  if ((!complete(key) && !complete(token)) || partial(key) || partial(token)) {
    throw new ApiError('Missing parameters: must provide either all push key fields, all token fields, or both.');
  }
  if (complete(key) && complete(token)) return 'register';
  return complete(key) ? 'rotate-key' : 'rotate-token';
}

/** A device_id that names no device the caller registered (Zulip's check_device_id: one error for missing and another user's). */
export function invalidDeviceId(): ApiError {
  return new ApiError('Invalid `device_id`');
}

/** How many devices a user may have registered at once: a Parley limit (Zulip has none), far above any person's phones. */
export const MAX_CLIENT_DEVICES_PER_USER = 1000;

/**
 * How long a token may stay pending at the push relay before it counts as
 * expired (Zulip's PUSH_REGISTRATION_LIVENESS_TIMEOUT, a day: longer than any
 * minor outage). Within it, another registration of a token is refused.
 */
export const PUSH_REGISTRATION_LIVENESS_SECONDS = 24 * 60 * 60;

/**
 * The codes a refused registration reports (Zulip's Device choices): the
 * relay's own code when it is one of these, else BAD_REQUEST; a registration
 * the relay never answered counts as REQUEST_EXPIRED, which tells the app to
 * register again with a fresh encrypted_push_registration.
 */
export const REGISTRATION_ERROR_CODES: ReadonlySet<string> = new Set(['INVALID_BOUNCER_PUBLIC_KEY', 'REQUEST_EXPIRED', 'BAD_REQUEST']);
export const REGISTRATION_EXPIRED = 'REQUEST_EXPIRED';

/** What the rules below read of a device's registration state. */
export interface RegistrationState {
  pending_token_id: string | null;
  token_updated_at: number | null;
  registration_error: string | null;
}

/**
 * Why the device's pending token is not registered: the relay's refusal, or
 * REQUEST_EXPIRED once it has been pending a day without an answer (its
 * relay job was lost with a process and not sent again): the app then
 * registers again with a fresh payload, as after Zulip's bouncer worker
 * times out. Null while the relay may still answer.
 */
export function registrationErrorOf(d: RegistrationState, now: number): string | null {
  if (d.registration_error !== null) return d.registration_error;
  const stale =
    d.pending_token_id !== null && d.token_updated_at !== null && now - d.token_updated_at >= PUSH_REGISTRATION_LIVENESS_SECONDS;
  return stale ? REGISTRATION_EXPIRED : null;
}

/** Whether the relay may still answer the device's pending token: then another token is refused. */
export const registrationInProgress = (d: RegistrationState, now: number): boolean =>
  d.pending_token_id !== null && registrationErrorOf(d, now) === null;

/** The error of a push registration when no relay is configured (Zulip's PushServiceNotConfiguredError). */
export function pushServiceNotConfigured(): ApiError {
  return new ApiError('Server is not configured to use push notification service.', 'PUSH_SERVICE_NOT_CONFIGURED');
}

/** Zulip truncates the content of a push notification to 200 characters, with an ellipsis. */
export const MAX_PUSH_CONTENT_CHARS = 200;

/** A Map, not an object: an entity named like one of Object's own properties (`&constructor;`) is no entity. */
const ENTITIES = new Map([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
]);

/**
 * The text a notification shows for a rendered message, as Zulip's
 * get_mobile_push_content makes it: the rendered HTML as plain text (a
 * mention reads "@Name", emphasis loses its markers), one line per block,
 * truncated to 200 characters.
 */
export function pushContent(renderedHtml: string): string {
  const text = renderedHtml
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(?:p|li|h[1-6]|pre|blockquote|div|tr)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]+);/g, (whole, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return ENTITIES.get(name) ?? whole;
    })
    .replace(/\n{2,}/g, '\n')
    .trim();
  const chars = [...text];
  return chars.length > MAX_PUSH_CONTENT_CHARS ? chars.slice(0, MAX_PUSH_CONTENT_CHARS - 1).join('') + '…' : text;
}
