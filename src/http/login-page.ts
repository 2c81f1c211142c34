import type { Router, Request, Response } from 'express';
import type { AppContext } from '../context';
import { csrfRefusal, hashSessionKey, readCookie, SESSION_COOKIE } from '../domain/sessions';
import { endBrowserSession } from '../handlers/sessions';
import { loginPage } from '../handlers/login-page';
import { findSessionByKeyHash } from '../queries/sessions';
import { crossSiteFormPage, formField, formPagesRouter, pageRealm } from './page-forms';
import { RESET_FORM_PATH } from './password-reset-pages';
import { clearSessionCookies, logIn, nextPath } from './session-cookies';
import { escapeHtml, sendPage } from './site-pages';

const LOGIN_PATH = '/login/';
/** Zulip's logout path: a POST, with the session's CSRF token. */
export const LOGOUT_PATH = '/accounts/logout/';

/**
 * The login page: email and password, and the "Forgot your password?"
 * link. It checks the password exactly as POST /fetch_api_key does (the
 * same action). A successful login starts a browser session (its cookies,
 * src/http/session-cookies.ts) and goes to `/`, the web app, or to the
 * `next` path the form or the address carried, as Zulip's login does.
 * POST /accounts/logout/ ends the session.
 */
export function loginPageRouter(ctx: AppContext): Router {
  const { router, form } = formPagesRouter();
  router.get(LOGIN_PATH, async (req, res) => {
    const realm = await pageRealm(ctx, req, res);
    if (realm) loginForm(res, 200, realm.name, '', queryNext(req), null);
  });
  router.post(LOGIN_PATH, form, async (req: Request, res: Response) => {
    const realm = await pageRealm(ctx, req, res);
    if (!realm) return;
    const email = formField(req, 'username');
    const next = formField(req, 'next') || queryNext(req);
    const outcome = await loginPage(ctx, email, formField(req, 'password'), req.headers.host);
    if (outcome.result === 'refused') return loginForm(res, outcome.status, realm.name, email, next, outcome.message);
    await logIn(ctx, req, res, { id: outcome.userId, realm_id: realm.id });
    res.redirect(302, nextPath(next));
  });
  router.post(LOGOUT_PATH, form, async (req: Request, res: Response) => {
    const key = readCookie(req.headers.cookie, SESSION_COOKIE);
    const session = key ? await findSessionByKeyHash(ctx.db, hashSessionKey(key)) : undefined;
    if (key && session) {
      // Django's CSRF check of a form post: the csrfmiddlewaretoken field, or the header a script sends.
      const field = formField(req, 'csrfmiddlewaretoken');
      const header = req.headers['x-csrftoken'];
      const sent = field || (Array.isArray(header) ? header[0] : header);
      if (csrfRefusal(sent, session.csrf_token, field ? 'form' : 'header') !== null) return crossSiteFormPage(res);
      await endBrowserSession(ctx, key);
    }
    // Without a session there is nothing to end: the cookies are cleared all the same.
    clearSessionCookies(req, res, ctx.config.externalUrl);
    res.redirect(302, LOGIN_PATH);
  });
  return router;
}

/** The `next` of the login page's address (`/login/?next=/#narrow/...`), kept through the form. */
function queryNext(req: Request): string {
  const next = req.query.next;
  return typeof next === 'string' ? next : '';
}

function loginForm(res: Response, status: number, realmName: string, email: string, next: string, error: string | null): void {
  sendPage(
    res,
    status,
    `Log in to ${realmName}`,
    `<h1>Log in to ${escapeHtml(realmName)}</h1>
${error ? `<p class="error">${escapeHtml(error)}</p>\n` : ''}<form method="post" action="${LOGIN_PATH}">
${next ? `<input type="hidden" name="next" value="${escapeHtml(next)}">\n` : ''}<label for="username">Email address</label>
<input type="email" id="username" name="username" value="${escapeHtml(email)}" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>
<p><a href="${RESET_FORM_PATH}">Forgot your password?</a></p>`,
  );
}
