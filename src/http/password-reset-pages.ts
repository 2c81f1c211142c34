import type { Router, Response } from 'express';
import type { AppContext } from '../context';
import { getResetLinkAccount } from '../access/password-reset';
import { MAX_PASSWORD_LENGTH, PASSWORD_RESET_LINK_SECONDS, resetLinkHours } from '../domain/password-reset';
import { MIN_PASSWORD_LENGTH } from '../domain/secrets';
import { requestPasswordReset, resetPassword } from '../handlers/password-reset';
import { formField, formPagesRouter, noOrganization, pageRealm } from './page-forms';
import { escapeHtml, sendPage } from './site-pages';

export const RESET_FORM_PATH = '/accounts/password/reset/';
const DONE_PATH = '/accounts/password/reset/done/';

/**
 * Password reset in the browser, Zulip's paths and steps
 * (docs/architecture/password-reset.md): the "forgot password" form, the
 * "check your email" page it always leads to, and the page a mailed link
 * opens, where the new password is set. HTML only, no script; forms post
 * to the page they are on. Every outcome is a page, a refused one included
 * (the rate limits answer 429 with one).
 */
export function passwordResetPagesRouter(ctx: AppContext): Router {
  const { router, form } = formPagesRouter();
  router.get(RESET_FORM_PATH, async (req, res) => {
    const realm = await pageRealm(ctx, req, res);
    if (realm) requestForm(res, 200, realm.name, '', null);
  });

  router.post(RESET_FORM_PATH, form, async (req, res) => {
    const email = formField(req, 'email');
    const outcome = await requestPasswordReset(ctx, { email, host: req.headers.host, clientAddress: req.ip });
    switch (outcome.result) {
      case 'sent':
        // Post/redirect/get: reloading the answer sends nothing again.
        return res.redirect(303, DONE_PATH);
      case 'no-organization':
        return noOrganization(res);
      case 'invalid-email':
        return requestForm(res, 200, outcome.realmName, email, 'Enter a valid email address.');
      case 'rate-limited':
        return sendPage(
          res,
          429,
          'Too many requests',
          `<h1>Too many requests</h1>
<p>Too many password reset emails were asked for this address or from your network. Try again in
${outcome.retryAfterSeconds} seconds.</p>`,
        );
    }
  });

  router.get(DONE_PATH, (_req, res) => {
    sendPage(
      res,
      200,
      'Check your email',
      `<h1>Check your email</h1>
<p>If the address you entered has an account here, an email with a link to choose a new password is on its way.
It can take a few minutes to arrive; look in your spam folder too.</p>
<p>The link works once, for ${resetLinkHours(PASSWORD_RESET_LINK_SECONDS)} hours.</p>`,
    );
  });

  router.get(`${RESET_FORM_PATH}:token/`, async (req, res) => {
    const account = await getResetLinkAccount(ctx.db, String(req.params.token), Math.floor(ctx.clock.now() / 1000));
    if (!account) return invalidLink(res);
    passwordForm(res, 200, account.user.delivery_email, null);
  });

  router.post(`${RESET_FORM_PATH}:token/`, form, async (req, res) => {
    const outcome = await resetPassword(ctx, {
      token: String(req.params.token),
      password: formField(req, 'new_password1'),
      confirmation: formField(req, 'new_password2'),
    });
    switch (outcome.result) {
      case 'invalid-link':
        return invalidLink(res);
      case 'invalid-password':
        return passwordForm(res, 200, outcome.email, outcome.message);
      case 'changed': {
        const site = escapeHtml(outcome.realmUrl);
        return sendPage(
          res,
          200,
          'Password changed',
          `<h1>Password changed</h1>
<p>The password of ${escapeHtml(outcome.email)} in ${escapeHtml(outcome.realm.name)} is changed.
<a href="/login/">Log in</a> here, or with a <a href="https://zulip.com/apps/">Zulip app</a> at <code>${site}</code>, with your email address and the new password.</p>
<p>Browsers logged in to this account were logged out. Apps already logged in stay logged in, as the account's API key is unchanged.</p>`,
        );
      }
    }
  });
  return router;
}

const errorLine = (error: string | null) => (error ? `<p class="error">${escapeHtml(error)}</p>\n` : '');

function requestForm(res: Response, status: number, realmName: string, email: string, error: string | null): void {
  sendPage(
    res,
    status,
    'Forgot your password?',
    `<h1>Forgot your password?</h1>
<p>Enter the email address of your account in ${escapeHtml(realmName)}: we will email you a link to choose a new one.</p>
${errorLine(error)}<form method="post" action="${RESET_FORM_PATH}">
<label for="email">Email address</label>
<input type="email" id="email" name="email" value="${escapeHtml(email)}" autocomplete="email" required autofocus>
<button type="submit">Send reset link</button>
</form>`,
  );
}

function passwordForm(res: Response, status: number, email: string, error: string | null): void {
  sendPage(
    res,
    status,
    'Choose a new password',
    `<h1>Choose a new password</h1>
<p>For ${escapeHtml(email)}: at least ${MIN_PASSWORD_LENGTH} characters. Apps already logged in stay logged in; browsers are logged out.</p>
${errorLine(error)}<form method="post">
<label for="new_password1">New password</label>
<input type="password" id="new_password1" name="new_password1" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" maxlength="${MAX_PASSWORD_LENGTH}" required autofocus>
<label for="new_password2">New password again</label>
<input type="password" id="new_password2" name="new_password2" autocomplete="new-password" maxlength="${MAX_PASSWORD_LENGTH}" required>
<button type="submit">Set password</button>
</form>`,
  );
}

function invalidLink(res: Response): void {
  sendPage(
    res,
    404,
    'Reset link not valid',
    `<h1>This reset link does not work</h1>
<p>It has expired, has been used already (each link works once), or was never valid.
<a href="${RESET_FORM_PATH}">Ask for a new link</a>.</p>`,
  );
}
