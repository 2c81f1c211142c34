import type { Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { insertAuditLog } from '../queries/audit';
import { markPasswordResetTokensUsed } from '../queries/password-reset-tokens';
import { updateUser } from '../queries/users';

/**
 * The one way a password is changed (PATCH /settings, a reset link): the
 * new hash stored, an audit row naming who did it, and every reset link the
 * user still holds retired, as a changed password invalidates Django's reset
 * tokens in Zulip. Nothing else: the API key stays, so every client logged
 * in keeps working (Parley has no sessions to end).
 */
export async function setPasswordInTx(
  tx: Tx,
  user: { id: number; realm_id: number },
  passwordHash: string,
  actorId: number,
  now: number,
): Promise<void> {
  await updateUser(tx.trx, user.id, { password_hash: passwordHash });
  await insertAuditLog(tx.trx, { realmId: user.realm_id, actorId, userId: user.id, eventType: AuditEventType.USER_PASSWORD_CHANGED });
  await markPasswordResetTokensUsed(tx.trx, user.id, now);
}
