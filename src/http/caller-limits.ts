import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import { clientAddressKey, RateLimitNotes } from '../domain/rate-limits';
import type { UserRow } from '../queries/rows';

/** Notes of the limits a request counts against, each written to the response's X-RateLimit-* headers. */
export function responseRateLimitNotes(res: Response): RateLimitNotes {
  return new RateLimitNotes((headers) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  });
}

/**
 * Zulip's limits, after authentication as in Zulip (a refused credential is a
 * 401 that counts against nothing): the caller's own limit, or the client
 * address's for a request without credentials. The API pipeline, resumable
 * uploads (/api/v1/tus) and the file routes (/user_uploads) all count here,
 * so no route is a way around them. Refuses with Zulip's 429.
 */
export async function consumeCallerLimit(
  ctx: AppContext,
  req: Request,
  user: Pick<UserRow, 'id'> | null,
  notes: RateLimitNotes,
): Promise<void> {
  if (user) await ctx.rateLimits.consume('user', String(user.id), notes);
  else await ctx.rateLimits.consume('ip', clientAddressKey(req.ip ?? req.socket.remoteAddress), notes);
}
