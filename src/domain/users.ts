import { ApiError, ownerRequired } from '../errors';
import { isAdminRole, isGuestRole, Role } from './roles';
import { isPasswordStrongEnough } from './secrets';

/** Zulip's bot type codes: generic, incoming webhook, outgoing webhook, embedded. */
export const BotType = {
  DEFAULT: 1,
  INCOMING_WEBHOOK: 2,
  OUTGOING_WEBHOOK: 3,
  EMBEDDED: 4,
} as const;
export type BotTypeCode = (typeof BotType)[keyof typeof BotType];

export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;

/**
 * Zulip's full-name rules: trimmed, 2..100 characters, no control characters
 * and none of the characters Markdown mentions and quoting rely on. A name
 * ending in `|<digits>` is refused too: `@**Name|15**` is how mentions
 * disambiguate users, so such a name would read as a mention of user 15.
 */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length > MAX_NAME_LENGTH) throw new ApiError('Name too long!');
  if (length < MIN_NAME_LENGTH) throw new ApiError('Name too short!');
  if (/[*`\\>"@]/.test(name) || /\p{C}/u.test(name)) throw new ApiError('Invalid characters in name!');
  if (/\|\d+$/.test(raw)) throw new ApiError('Invalid format!');
  return name;
}

// A deliberately plain address check: one @, a dotted domain, no spaces.
const EMAIL_RE = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:".]+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL_RE.test(email);
}

/** A new account's address and name as they are stored, and the password it gets (null: none, an API key only). */
export interface NewAccount {
  email: string;
  fullName: string;
  password: string | null;
}

/**
 * The checks every way of making an account applies before anything is
 * written (POST /users, sign-up with an invitation link, the command line's
 * create-user), in Zulip's order: the name, the address, the password. Each
 * way words a bad address its own way, as Zulip's do; the rules are these.
 * Whether the address is taken is createUserInTx's to check.
 */
export function checkNewAccount(input: NewAccount, badEmailMessage: string): NewAccount {
  const fullName = checkFullName(input.fullName);
  const email = input.email.trim();
  if (!isValidEmail(email)) throw new ApiError(badEmailMessage);
  if (isSystemBotEmail(email)) throw new ApiError(`${email} is reserved for system bots`);
  if (input.password !== null && !isPasswordStrongEnough(input.password)) throw new ApiError('The password is too weak.');
  return { email, fullName, password: input.password };
}

/**
 * The system bots' addresses (Notification Bot, Email Gateway) are in the
 * reserved `.invalid` domain, made on first use: a person may not take one
 * first (Zulip's email_reserved_for_system_bots_error), or mail and notices
 * would be posted as them.
 */
export const SYSTEM_BOT_DOMAIN = 'parley.invalid';
export const isSystemBotEmail = (email: string) => email.trim().toLowerCase().endsWith(`@${SYSTEM_BOT_DOMAIN}`);

/** Case-insensitive key under which an address is unique within a realm. */
export const emailKey = (email: string) => email.trim().toLowerCase();

/**
 * Who may move a user from `from` to `to` (PATCH /users/{id} role), in
 * Zulip's order of checks. The caller is an administrator already.
 * - Only owners grant or remove the owner role.
 * - The only (human, active) owner keeps it, or the organization would be
 *   left without one.
 * - A guest is not made an administrator or owner in one step (the spec's
 *   rule: "a guest becoming administrator" is refused); they become a
 *   member or moderator first.
 */
export function checkRoleChange(actorRole: number, from: number, to: number, isOnlyOwner: boolean): void {
  if ((from === Role.OWNER || to === Role.OWNER) && actorRole !== Role.OWNER) throw ownerRequired();
  if (from === Role.OWNER && isOnlyOwner) {
    throw new ApiError('The owner permission cannot be removed from the only organization owner.');
  }
  if (isGuestRole(from) && isAdminRole(to)) throw new ApiError('Guests cannot be organization administrators');
}

/**
 * The API email (the `email` field every client sees) of a user whose real
 * address is hidden (email_address_visibility other than "everyone"):
 * Zulip's user<id>@<organization host> placeholder. Bots keep their address.
 */
export function apiEmailFor(userId: number, deliveryEmail: string, visibility: number, isBot: boolean, host: string): string {
  return isBot || visibility === 1 ? deliveryEmail : `user${userId}@${host}`;
}

/**
 * The user ID a placeholder API email names (user<id>@<host>, as apiEmailFor
 * makes them), or null for any other address. Zulip matches the pattern
 * case-sensitively, against the organization's current host.
 */
export function userIdOfPlaceholderEmail(email: string, host: string): number | null {
  if (!email.endsWith(`@${host}`)) return null;
  const m = /^user(\d{1,10})@/.exec(email);
  return m && m[0].length + host.length === email.length ? Number(m[1]) : null;
}
