import type { Router, Request, Response } from 'express';
import type { AppContext } from '../context';
import { loginPage } from '../handlers/login-page';
import { formField, formPagesRouter, pageRealm } from './page-forms';
import { RESET_FORM_PATH } from './password-reset-pages';
import { escapeHtml, sendPage, siteOf } from './site-pages';

const LOGIN_PATH = '/login/';

/**
 * The login page: email and password, and the "Forgot your password?"
 * link. It checks the password exactly as POST /fetch_api_key does (the
 * same action). Parley has no web app yet, so a successful login only says
 * so and where the apps log in; the web client will start its session here.
 */
export function loginPageRouter(ctx: AppContext): Router {
  const { router, form } = formPagesRouter();
  router.get(LOGIN_PATH, async (req, res) => {
    const realm = await pageRealm(ctx, req, res);
    if (realm) loginForm(res, 200, realm.name, '', null);
  });
  router.post(LOGIN_PATH, form, async (req: Request, res: Response) => {
    const realm = await pageRealm(ctx, req, res);
    if (!realm) return;
    const email = formField(req, 'username');
    const outcome = await loginPage(ctx, email, formField(req, 'password'), req.headers.host);
    if (outcome.result === 'refused') return loginForm(res, outcome.status, realm.name, email, outcome.message);
    const site = escapeHtml(siteOf(req));
    sendPage(
      res,
      200,
      `Logged in to ${realm.name}`,
      `<h1>Your password is right</h1>
<p>You are ${escapeHtml(outcome.email)} in ${escapeHtml(realm.name)}. This server has no web app yet:
<a href="https://zulip.com/apps/">use a Zulip app</a> and log in at <code>${site}</code> with the same email address and password.</p>`,
    );
  });
  return router;
}

function loginForm(res: Response, status: number, realmName: string, email: string, error: string | null): void {
  sendPage(
    res,
    status,
    `Log in to ${realmName}`,
    `<h1>Log in to ${escapeHtml(realmName)}</h1>
${error ? `<p class="error">${escapeHtml(error)}</p>\n` : ''}<form method="post" action="${LOGIN_PATH}">
<label for="username">Email address</label>
<input type="email" id="username" name="username" value="${escapeHtml(email)}" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>
<p><a href="${RESET_FORM_PATH}">Forgot your password?</a></p>`,
  );
}
