import type { AppContext } from '../context';
import { getOwnSessions } from '../access/sessions';
import { doCreateSession, doEndSession, doRevokeSession, type NewSession } from '../actions/sessions';
import { caller, HandlerTable } from '../http/handler';

/** GET and DELETE /users/me/sessions: the caller's browser sessions (Parley's own operations, ADR 0053). */
export const sessionHandlers: HandlerTable = {
  'get-sessions': async (call) => {
    const rows = await getOwnSessions(call.ctx.db, caller(call).user.id, Date.now());
    const seconds = (ms: number) => Math.floor(ms / 1000);
    return {
      sessions: rows.map((s) => ({
        id: s.id,
        created: seconds(s.created_at),
        last_active: seconds(s.last_active_at),
        expires: seconds(s.expires_at),
        ip_address: s.ip_address,
        user_agent: s.user_agent,
        current: s.id === call.sessionId,
      })),
    };
  },
  'delete-session': async (call) => {
    await doRevokeSession(call.ctx, caller(call).user.id, call.params.session_id);
    return {};
  },
};

/** A login (the login page, a sign-up) starts a browser session: src/http/session-cookies.ts sets its cookies. */
export function startBrowserSession(
  ctx: AppContext,
  user: { id: number; realm_id: number },
  client: { ip: string | undefined; userAgent: string | undefined },
): Promise<NewSession> {
  return doCreateSession(ctx, user, client);
}

/** POST /accounts/logout/: the session of this cookie ends. */
export function endBrowserSession(ctx: AppContext, key: string): Promise<void> {
  return doEndSession(ctx, key);
}
