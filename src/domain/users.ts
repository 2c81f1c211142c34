import { ApiError } from '../errors';

export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;

/**
 * Zulip's full-name rules: trimmed, 2..100 characters, no control characters
 * and none of the characters Markdown mentions and quoting rely on.
 */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length > MAX_NAME_LENGTH) throw new ApiError('Name too long!');
  if (length < MIN_NAME_LENGTH) throw new ApiError('Name too short!');
  if (/[*`\\>"@]/.test(name) || /\p{C}/u.test(name)) throw new ApiError('Invalid characters in name!');
  return name;
}

// A deliberately plain address check: one @, a dotted domain, no spaces.
const EMAIL_RE = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:".]+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL_RE.test(email);
}

/** Case-insensitive key under which an address is unique within a realm. */
export const emailKey = (email: string) => email.trim().toLowerCase();
