import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { getEmailInviteForSignup, getInviteLinkForSignup, type SignupInvitation } from '../access/invites';
import { realmUrl } from '../domain/realm-address';
import { MIN_PASSWORD_LENGTH } from '../domain/secrets';
import { acceptInvitationForm, requestLinkSignupForm, type SignupForm } from '../handlers/signup';
import type { RealmRow } from '../queries/rows';
import { logIn } from './session-cookies';
import { pageForm } from './page-forms';
import { escapeHtml, sendPage } from './site-pages';

/**
 * The sign-up pages an invitation opens, plain HTML forms without script
 * (docs/architecture/invitations.md):
 * - `/accounts/do_confirm/<key>`, the link of an email invitation (the
 *   shape of Zulip's confirmation links): the invited address is fixed, the
 *   person chooses their name and password;
 * - `/join/<key>/`, a reusable invitation link (what POST /invites/multiuse
 *   returns): the person gives their address, and the sign-up page's link
 *   for it is mailed there (src/actions/link-signup.ts), so an address is
 *   signed up with only by whoever reads its mail, as in Zulip.
 * The forms post back to the page's own address. A refusal shows the form
 * again with Zulip's message and the name and address as entered (never
 * the password); success logs the new account in and goes to `/` (the web
 * app), as Zulip's, or says to check one's mail. A
 * link that cannot be used gets a page saying so, the same for an unknown key.
 */
export function signupPagesRouter(ctx: AppContext): Router {
  const router = Router();
  const form = pageForm();
  const emailPaths = ['/accounts/do_confirm/:key', '/accounts/do_confirm/:key/'];
  router.get(emailPaths, async (req, res) => {
    const found = await getEmailInviteForSignup(ctx.db, String(req.params.key));
    if (found.kind !== 'email') return sendUnusable(ctx, res, found);
    sendForm(res, 200, found, { email: '', fullName: '', password: '' }, null);
  });
  router.post(emailPaths, form, async (req, res) => {
    const key = String(req.params.key);
    const found = await getEmailInviteForSignup(ctx.db, key);
    if (found.kind !== 'email') return sendUnusable(ctx, res, found);
    const entered = formOf(req, found);
    const result = await acceptInvitationForm(ctx, key, entered);
    if (result.ok) {
      // As Zulip's registration: the new account is logged in and lands in the web app.
      await logIn(ctx, req, res, result.user);
      return res.redirect(302, '/');
    }
    if (result.expired) return sendUnusable(ctx, res, { kind: 'unusable' });
    sendForm(res, 400, found, entered, result.error);
  });
  const linkPaths = ['/join/:key', '/join/:key/'];
  router.get(linkPaths, async (req, res) => {
    const found = await getInviteLinkForSignup(ctx.db, String(req.params.key));
    if (found.kind !== 'link') return sendUnusable(ctx, res, found);
    sendAddressForm(res, 200, found.realm, '', null);
  });
  router.post(linkPaths, form, async (req, res) => {
    const key = String(req.params.key);
    const found = await getInviteLinkForSignup(ctx.db, key);
    if (found.kind !== 'link') return sendUnusable(ctx, res, found);
    const email = formOf(req, found).email;
    const result = await requestLinkSignupForm(ctx, key, email, req.ip);
    if (!result.ok) {
      if (result.expired) return sendUnusable(ctx, res, { kind: 'unusable' });
      return sendAddressForm(res, 400, found.realm, email, result.error);
    }
    if (result.result === 'rate-limited') {
      res.setHeader('Retry-After', String(result.retryAfterSeconds));
      return sendPage(
        res,
        429,
        'Too many requests',
        `<h1>Too many requests</h1>\n<p>Too many sign-up mails were asked for from your network. Try again in ${result.retryAfterSeconds} seconds.</p>`,
      );
    }
    sendPage(
      res,
      200,
      'Check your email',
      `<h1>Check your email</h1>
<p>To finish joining ${escapeHtml(found.realm.name)}, open the link we mailed to <strong>${escapeHtml(result.email)}</strong>.</p>
<p>It works for a day. If nothing arrives, check your spam folder, or ask again.</p>`,
    );
  });
  return router;
}

/** A reusable link's page: the address the sign-up link is mailed to. */
function sendAddressForm(res: Response, status: number, realm: RealmRow, email: string, error: string | null): void {
  const name = escapeHtml(realm.name);
  sendPage(
    res,
    status,
    `Join ${realm.name}`,
    `<h1>Join ${name}</h1>
<p>You are invited to join ${name}. Enter your email address: we will mail you a link to choose your name and password.</p>
${error === null ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>\n`}<form method="post">
<label for="email">Email address</label>
<input type="email" id="email" name="email" value="${escapeHtml(email)}" required autocomplete="email">
<button type="submit">Continue</button>
</form>`,
  );
}

/** The posted fields; an email invitation's address is the invitation's whatever was posted. */
function formOf(req: Request, found: SignupInvitation & { kind: 'email' | 'link' }): SignupForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const field = (name: string) => {
    const v = body[name];
    return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';
  };
  return {
    email: found.kind === 'email' ? found.invite.email : field('email'),
    fullName: field('full_name'),
    password: field('password'),
  };
}

/** An email invitation's form: the address is the invitation's; the person chooses a name and a password. */
function sendForm(
  res: Response,
  status: number,
  found: SignupInvitation & { kind: 'email' },
  entered: SignupForm,
  error: string | null,
): void {
  const name = escapeHtml(found.realm.name);
  const emailField = `<p>Your account's email address: <strong>${escapeHtml(found.invite.email)}</strong></p>`;
  sendPage(
    res,
    status,
    `Join ${found.realm.name}`,
    `<h1>Join ${name}</h1>
<p>You are invited to join ${name}. Choose the name others will see and a password (at least ${MIN_PASSWORD_LENGTH} characters).</p>
${error === null ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>\n`}<form method="post">
${emailField}
<label for="full_name">Full name</label>
<input type="text" id="full_name" name="full_name" value="${escapeHtml(entered.fullName)}" required maxlength="100" autocomplete="name">
<label for="password">Password</label>
<input type="password" id="password" name="password" required minlength="${MIN_PASSWORD_LENGTH}" autocomplete="new-password">
<button type="submit">Sign up</button>
</form>`,
  );
}

/** How to log in: the Zulip apps, at the organization's address, with the new account's address and password. */
function loginHelp(ctx: AppContext, realm: RealmRow): string {
  const site = escapeHtml(realmUrl(ctx.config.externalUrl, realm.string_id));
  return `<p><a href="https://zulip.com/apps/">Get a Zulip app</a> (mobile, desktop or terminal) and log in at <code>${site}</code> with your email address and password.</p>`;
}

function sendUnusable(ctx: AppContext, res: Response, found: SignupInvitation): void {
  if (found.kind === 'used') {
    return sendPage(
      res,
      404,
      'Invitation used',
      `<h1>Invitation used</h1>
<p>This invitation was used already: its account exists.</p>
${loginHelp(ctx, found.realm)}`,
    );
  }
  sendPage(
    res,
    404,
    'Invitation',
    `<h1>Invitation</h1>
<p>The invitation link has expired or is not valid.</p>
<p>Invitations stop working when they expire, are revoked or have been used. Ask the person who invited you for a new one.</p>`,
  );
}
