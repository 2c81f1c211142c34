import crypto from 'node:crypto';
import type { RateLimitRule } from './rate-limits';
import { MIN_PASSWORD_LENGTH, isPasswordStrongEnough } from './secrets';

/**
 * How long a reset link works: Django's PASSWORD_RESET_TIMEOUT default,
 * three days, which Zulip keeps.
 */
export const PASSWORD_RESET_LINK_SECONDS = 3 * 24 * 60 * 60;

/** Zulip's longest password (RegistrationForm.MAX_PASSWORD_LENGTH, which its set-password form shares). */
export const MAX_PASSWORD_LENGTH = 100;

/**
 * Zulip's limits on reset mail (its RATE_LIMITING_RULES): per address
 * (`password_reset_form_by_email`) two an hour and five a day, since anyone
 * who knows an address could otherwise flood it; per client address
 * (`sends_email_by_ip`) five a day, Zulip's general limit on requests that
 * send mail.
 */
export const PASSWORD_RESET_BY_EMAIL: readonly RateLimitRule[] = [
  { points: 2, durationSeconds: 60 * 60 },
  { points: 5, durationSeconds: 24 * 60 * 60 },
];
export const SENDS_EMAIL_BY_IP: RateLimitRule = { points: 5, durationSeconds: 24 * 60 * 60 };

/** What the table stores of a token: its SHA-256 (hex). A token is 24 random bytes, so no salt or slow hash is needed. */
export function hashResetToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface ResetTokenState {
  expires_at: number;
  used_at: number | null;
}

export function isResetTokenUsable(token: ResetTokenState, now: number): boolean {
  return token.used_at === null && now < token.expires_at;
}

/** Whole hours, for the mail's "valid for" line. */
export const resetLinkHours = (seconds = PASSWORD_RESET_LINK_SECONDS) => Math.round(seconds / 3600);

/**
 * The set-password form's checks, in the order Zulip's form reports them
 * (LoggingSetPasswordForm: length bounds, strength, then the two fields
 * agreeing); null when the password may be set. Zulip's strength rule is
 * its minimum length plus a zxcvbn guess count; Parley checks the length
 * (isPasswordStrongEnough), as its other password paths do.
 */
export function checkNewPassword(password: string, confirmation: string): string | null {
  const length = [...password].length;
  if (length === 0) return 'Choose a new password.';
  if (length > MAX_PASSWORD_LENGTH) return `That password is too long: at most ${MAX_PASSWORD_LENGTH} characters.`;
  if (!isPasswordStrongEnough(password)) return `That password is too weak: use at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password !== confirmation) return 'The two passwords are not the same.';
  return null;
}
