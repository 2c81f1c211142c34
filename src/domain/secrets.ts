import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (
  password: crypto.BinaryLike,
  salt: crypto.BinaryLike,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

/**
 * Password hashing: scrypt (memory-hard, in node:crypto, so no native addon
 * to build). Parameters are stored with each hash so they can be raised later
 * without invalidating old hashes. See docs/adr/0004-password-hashing.md.
 */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 };

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Checked against when there is no hash to check (no such account, or one
 * without a password): the same scrypt run as a real check, so a login's time
 * does not tell whether the account exists (ADR 0004).
 */
const NO_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(SCRYPT.keylen).toString('base64')}`;

/** Whether `password` is the one `stored` was made from; false, at the same cost, when nothing is stored. */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  const usable = parts.length === 6 && parts[0] === 'scrypt';
  const matches = await scryptMatches(password, usable ? parts : NO_HASH.split('$'));
  return usable && matches;
}

async function scryptMatches(password: string, parts: string[]): Promise<boolean> {
  const [, n, r, p, saltB64, keyB64] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyB64, 'base64');
  const actual = await scrypt(password, Buffer.from(saltB64, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return crypto.timingSafeEqual(actual, expected);
}

/** Zulip's minimum: six characters. */
export const MIN_PASSWORD_LENGTH = 6;
export const isPasswordStrongEnough = (password: string) => [...password].length >= MIN_PASSWORD_LENGTH;

const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A 32-character alphanumeric API key (Zulip's format), from a CSPRNG without modulo bias. */
export function generateApiKey(length = 32): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248) out += KEY_ALPHABET[byte % 62]; // 248 = 4 * 62: reject the biased tail
      if (out.length === length) break;
    }
  }
  return out;
}

export function randomToken(bytes = 18): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

/** Compare secrets in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    crypto.timingSafeEqual(ab, ab); // spend comparable time either way
    return false;
  }
  return crypto.timingSafeEqual(ab, bb);
}

/** An invitation link key: 24 lowercase letters and digits (Zulip's confirmation-key format). */
export function randomInviteKey(): string {
  return generateApiKey(24).toLowerCase();
}
