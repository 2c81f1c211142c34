import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { bounded } from '../domain/bounded';
import { hashSessionKey, newCsrfToken, newSessionKey, USER_AGENT_MAX } from '../domain/sessions';
import { ApiError } from '../errors';
import { deleteExpiredUserSessions, deleteSessionByKeyHash, deleteUserSession, insertSession } from '../queries/sessions';

/** A new session's secrets, for its cookies: neither is stored as given (the key only as its SHA-256). */
export interface NewSession {
  id: number;
  key: string;
  csrfToken: string;
  /** Seconds the cookies live: the session's age. */
  maxAgeSeconds: number;
}

/**
 * A browser session for a user whose password (or sign-up) was just
 * accepted: a random key whose SHA-256 is the row's, and a CSRF token of its
 * own. The user's sessions that expired are deleted in the same
 * transaction, so a table of sessions never grows with every login.
 */
export async function doCreateSession(
  ctx: AppContext,
  user: { id: number; realm_id: number },
  client: { ip: string | undefined; userAgent: string | undefined },
): Promise<NewSession> {
  const key = newSessionKey();
  const csrfToken = newCsrfToken();
  const now = Date.now();
  const maxAgeSeconds = ctx.config.sessionCookieAge;
  const id = await inTransaction(ctx.db, async (tx) => {
    await deleteExpiredUserSessions(tx.trx, user.id, now);
    return insertSession(tx.trx, {
      user_id: user.id,
      realm_id: user.realm_id,
      key_hash: hashSessionKey(key),
      csrf_token: csrfToken,
      created_at: now,
      last_active_at: now,
      expires_at: now + maxAgeSeconds * 1000,
      ip_address: client.ip ? bounded(client.ip, 63) : null,
      // Cut to the column, without bounded()'s ellipsis (a character more).
      user_agent: client.userAgent ? client.userAgent.slice(0, USER_AGENT_MAX) : null,
    });
  });
  return { id, key, csrfToken, maxAgeSeconds };
}

/** Logout: the session of this key ends (an unknown key: nothing to end). */
export async function doEndSession(ctx: AppContext, key: string): Promise<void> {
  await deleteSessionByKeyHash(ctx.db, hashSessionKey(key));
}

/**
 * DELETE /users/me/sessions/{session_id}: one of the caller's own sessions
 * ends, at once on every node (each request looks its session up). Another
 * user's session and a missing one get the same 400, so ids reveal nothing.
 */
export async function doRevokeSession(ctx: AppContext, userId: number, sessionId: number): Promise<void> {
  if (!(await deleteUserSession(ctx.db, userId, sessionId))) throw new ApiError('Invalid session ID');
}
