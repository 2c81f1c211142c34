import type { Knex } from 'knex';
import { hashResetToken, isResetTokenUsable } from '../domain/password-reset';
import { getPasswordResetToken, type PasswordResetTokenRow } from '../queries/password-reset-tokens';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserById } from '../queries/users';

export interface ResetLinkAccount {
  token: PasswordResetTokenRow;
  user: UserRow;
  realm: RealmRow;
}

/**
 * The account a reset link may set the password of: its token unused and
 * unexpired at `now`, its user an active human of an active organization.
 * Undefined otherwise, alike for a token that never existed, so the page
 * cannot be used to probe tokens.
 */
export async function getResetLinkAccount(db: Knex, token: string, now: number): Promise<ResetLinkAccount | undefined> {
  const row = await getPasswordResetToken(db, hashResetToken(token));
  if (!row || !isResetTokenUsable(row, now)) return undefined;
  const user = await getUserById(db, row.user_id);
  if (!user || !user.is_active || user.is_bot) return undefined;
  const realm = await getRealmById(db, user.realm_id);
  if (!realm || realm.deactivated) return undefined;
  return { token: row, user, realm };
}
