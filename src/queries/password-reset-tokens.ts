import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

export type PasswordResetTokenRow = TableRow<'password_reset_tokens'>;

export async function insertPasswordResetToken(q: Q, row: Omit<PasswordResetTokenRow, 'id' | 'used_at'>): Promise<number> {
  return insertOne(q, 'password_reset_tokens', { ...row, used_at: null });
}

/** The token whose SHA-256 this is, used or not. */
export async function getPasswordResetToken(q: Q, tokenHash: string): Promise<PasswordResetTokenRow | undefined> {
  return q('password_reset_tokens').where({ token_hash: tokenHash }).first();
}

/**
 * Marks the user's unused tokens used at `now`; with `tokenId`, only that
 * one. Returns how many it marked: 0 for a token another request used
 * first (the update is the check, so two posts of one link set one password).
 */
export async function markPasswordResetTokensUsed(q: Q, userId: number, now: number, tokenId?: number): Promise<number> {
  const query = q('password_reset_tokens').where({ user_id: userId }).whereNull('used_at');
  if (tokenId !== undefined) void query.where({ id: tokenId });
  return query.update({ used_at: now });
}

/** The addresses of the organizations (their string ids) where this address has an active account, other than `realmId`. */
export async function listOtherRealmsWithActiveAccount(q: Q, emailKey: string, realmId: number): Promise<string[]> {
  const rows: Array<{ string_id: string }> = await q('users')
    .join('realms', 'realms.id', 'users.realm_id')
    .where('users.email_key', emailKey)
    .where('users.is_active', true)
    .where('users.is_bot', false)
    .where('realms.deactivated', false)
    .whereNot('users.realm_id', realmId)
    .orderBy('realms.string_id')
    .select('realms.string_id');
  return rows.map((r) => r.string_id);
}
