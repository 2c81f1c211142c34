import type { Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { insertAuditLog } from '../queries/audit';
import { markPasswordResetTokensUsed } from '../queries/password-reset-tokens';
import { deleteSessionsOfUsers } from '../queries/sessions';
import { updateUser } from '../queries/users';

/**
 * The one way a password is changed (PATCH /settings, a reset link): the
 * new hash stored, an audit row naming who did it, and every reset link the
 * user still holds retired, as a changed password invalidates Django's reset
 * tokens in Zulip; and every browser session of the user ended but the one
 * making the change (`keepSessionId`), as Zulip's password change keeps only
 * the request's session (update_session_auth_hash). The API key stays, so the
 * apps logged in keep working, as in Zulip.
 */
export async function setPasswordInTx(
  tx: Tx,
  user: { id: number; realm_id: number },
  passwordHash: string,
  actorId: number,
  now: number,
  keepSessionId: number | null = null,
): Promise<void> {
  await updateUser(tx.trx, user.id, { password_hash: passwordHash });
  await insertAuditLog(tx.trx, { realmId: user.realm_id, actorId, userId: user.id, eventType: AuditEventType.USER_PASSWORD_CHANGED });
  await markPasswordResetTokensUsed(tx.trx, user.id, now);
  await deleteSessionsOfUsers(tx.trx, [user.id], keepSessionId);
}
