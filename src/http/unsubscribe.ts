import { Router } from 'express';
import { escapeHtml, sendPage } from './site-pages';

export type Unsubscribe = (
  kind: string,
  token: string,
) => Promise<{ ok: true; realmName: string; what: string } | { ok: false; reason: 'unknown_kind' | 'bad_token' | 'deactivated' }>;

/**
 * GET /accounts/unsubscribe/<kind>/<token>: the one-click link at the foot of
 * a mail (Zulip's path). It acts on GET, as Zulip's does, so that one click
 * is enough; POST does the same for mail clients that unsubscribe on their
 * own (RFC 8058's List-Unsubscribe-Post). Answers a page saying what changed.
 */
export function unsubscribeRouter(unsubscribe: Unsubscribe): Router {
  const router = Router();
  router.all('/accounts/unsubscribe/:kind/:token', async (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'POST') return next();
    try {
      const outcome = await unsubscribe(String(req.params.kind), String(req.params.token));
      if (outcome.ok) {
        return sendPage(
          res,
          200,
          'Unsubscribed',
          `<h1>Unsubscribed</h1>
<p>You will no longer get ${escapeHtml(outcome.what)} emails from ${escapeHtml(outcome.realmName)}.</p>
<p>You can turn them on again in your notification settings.</p>`,
        );
      }
      const why =
        outcome.reason === 'deactivated'
          ? 'The account this link was for is deactivated.'
          : 'This unsubscribe link is not valid. Check that you copied the whole address from the email, or change your email settings in the app.';
      sendPage(res, 404, 'Unsubscribe', `<h1>Unsubscribe</h1>\n<p>${why}</p>`);
    } catch (err) {
      next(err);
    }
  });
  return router;
}
