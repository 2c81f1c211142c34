import request from 'supertest';
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { AuditEventType } from '../src/domain/audit';
import { PASSWORD_RESET_LINK_SECONDS } from '../src/domain/password-reset';
import { MIN_PASSWORD_LENGTH } from '../src/domain/secrets';
import { redactUrl } from '../src/logger';
import { ManualClock } from './support/clock';
import { eachDatabase } from './support/databases';
import { linkIn, queuedEmails } from './support/mail';
import { CAST_PASSWORD, startTestServer, TestServer } from './support/server';

const FORM = '/accounts/password/reset/';

/**
 * Password reset in the browser, end to end through the mail queue: the
 * form answers alike for any address; an account gets a one-time, expiring
 * link; the link's page sets the password through the one password path
 * (audited, the API key kept); any other address gets Zulip's "no account
 * here" mail; the limits on reset mail answer with a page.
 */
eachDatabase('password reset', (dialect) => {
  let t: TestServer;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { clock });
  });
  afterAll(() => t.close());

  const ask = (email: string) => request(t.app).post(FORM).type('form').send({ email });
  const login = (username: string, password: string) => t.api.post('/fetch_api_key', null, { username, password });
  const setPassword = (path: string, p1: string, p2 = p1) =>
    request(t.app).post(path).type('form').send({ new_password1: p1, new_password2: p2 });
  /** Asks for a reset of `email` and returns the path of the link mailed to `to`. */
  async function resetLink(email: string, to = email): Promise<string> {
    const before = (await queuedEmails(t.ctx.db, to)).length;
    expect((await ask(email)).status).toBe(303);
    const mails = await queuedEmails(t.ctx.db, to);
    expect(mails).toHaveLength(before + 1);
    return new URL(linkIn(mails.at(-1)!.text_body, `${t.ctx.config.externalUrl}${FORM}`)).pathname;
  }

  it('the organization page links to the form, which asks for an address', async () => {
    const home = await request(t.app).get('/');
    expect(home.text).toContain(`<a href="${FORM}">Forgot your password?</a>`);
    const page = await request(t.app).get(FORM);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("form-action 'self'");
    expect(page.text).toContain(`<form method="post" action="${FORM}">`);
    expect(page.text).toContain('name="email"');
  });

  it('reset → mail → link → new password: the new one logs in, the old one no longer, the API key unchanged, audited', async () => {
    const user = t.cast.member;
    const path = await resetLink('Member@Example.com', user.delivery_email);
    const [mail] = (await queuedEmails(t.ctx.db, user.delivery_email)).slice(-1);
    expect(mail!.template).toBe('password_reset');
    expect(mail!.subject).toBe('Password reset for Test Organization');
    expect(mail!.from_name).toBe('Test Organization');
    expect(mail!.text_body).toContain(`for ${PASSWORD_RESET_LINK_SECONDS / 3600} hours`);
    expect(mail!.text_body).toContain('If you did not ask for this');
    expect(mail!.html_body).toContain(`href="${t.ctx.config.externalUrl}${path}"`);
    // Only the token's hash is stored.
    const token = path.split('/').at(-2)!;
    expect(await t.ctx.db('password_reset_tokens').where({ token_hash: token }).first()).toBeUndefined();

    const page = await request(t.app).get(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="new_password1"');
    expect(page.text).toContain('name="new_password2"');
    expect(page.text).toContain(user.delivery_email);

    const done = await setPassword(path, 'a brand new password');
    expect(done.status).toBe(200);
    expect(done.text).toContain('<h1>Password changed</h1>');
    expect(done.text).toContain(`<code>${t.ctx.config.externalUrl}</code>`);
    expect(done.text).toContain('stay logged in');

    const fresh = await login(user.delivery_email, 'a brand new password');
    expect(fresh.status).toBe(200);
    expect(fresh.body.api_key).toBe(user.api_key);
    expect((await login(user.delivery_email, CAST_PASSWORD)).status).toBe(401);
    // The API key still authenticates: nothing was signed out.
    expect((await t.api.get('/users/me', user)).status).toBe(200);
    const audit = await t.ctx.db('audit_log').where({ modified_user_id: user.id, event_type: AuditEventType.USER_PASSWORD_CHANGED });
    expect(audit).toHaveLength(1);
    expect(audit[0].acting_user_id).toBe(user.id);

    // One time only: the link now opens the clear page, and cannot set a password again.
    const again = await request(t.app).get(path);
    expect(again.status).toBe(404);
    expect(again.text).toContain('<h1>This reset link does not work</h1>');
    expect((await setPassword(path, 'yet another password')).status).toBe(404);
    expect((await login(user.delivery_email, 'yet another password')).status).toBe(401);
  });

  it('an older link stops working once the password is changed (by another link or by PATCH /settings); until then both work', async () => {
    const user = t.cast.moderator;
    const first = await resetLink(user.delivery_email);
    const second = await resetLink(user.delivery_email);
    expect((await request(t.app).get(first)).status).toBe(200);
    expect((await request(t.app).get(second)).status).toBe(200);
    expect((await setPassword(second, 'second link password')).status).toBe(200);
    expect((await request(t.app).get(first)).status).toBe(404);
    expect((await setPassword(first, 'first link password')).status).toBe(404);

    const third = await resetLink(user.delivery_email);
    const changed = await t.api.patch('/settings', user, { old_password: 'second link password', new_password: 'changed in settings' });
    expect(changed.status).toBe(200);
    expect((await request(t.app).get(third)).status).toBe(404);
    expect((await login(user.delivery_email, 'changed in settings')).status).toBe(200);
  });

  it('an expired link shows the clear page', async () => {
    const path = await resetLink(t.cast.guest.delivery_email);
    clock.advance((PASSWORD_RESET_LINK_SECONDS - 60) * 1000);
    expect((await request(t.app).get(path)).status).toBe(200);
    clock.advance(120 * 1000);
    const page = await request(t.app).get(path);
    expect(page.status).toBe(404);
    expect(page.text).toContain('It has expired, has been used already');
    expect((await setPassword(path, 'too late for this')).status).toBe(404);
    expect((await login(t.cast.guest.delivery_email, 'too late for this')).status).toBe(401);
  });

  it('an unknown or malformed link shows the same clear page', async () => {
    for (const path of [`${FORM}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/`, `${FORM}%3Cscript%3E/`, `${FORM}x`]) {
      const page = await request(t.app).get(path);
      expect(page.status).toBe(404);
      expect(page.text).toContain('<h1>This reset link does not work</h1>');
    }
  });

  it('a short or mismatched password shows the error on the form, and changes nothing', async () => {
    const user = t.cast.admin;
    const path = await resetLink(user.delivery_email);
    const short = await setPassword(path, 'x'.repeat(MIN_PASSWORD_LENGTH - 1));
    expect(short.status).toBe(200);
    expect(short.text).toContain(`<p class="error">That password is too weak: use at least ${MIN_PASSWORD_LENGTH} characters.</p>`);
    expect(short.text).toContain('name="new_password1"');
    const mismatched = await setPassword(path, 'one long password', 'another long password');
    expect(mismatched.text).toContain('<p class="error">The two passwords are not the same.</p>');
    const long = await setPassword(path, 'x'.repeat(101));
    expect(long.text).toContain('<p class="error">That password is too long: at most 100 characters.</p>');
    expect((await login(user.delivery_email, CAST_PASSWORD)).status).toBe(200);
    // The link still works after a refused attempt.
    expect((await setPassword(path, 'one long password')).status).toBe(200);
  });

  it('an unknown address gets the same answer and the no-account mail, naming organizations where it has an account', async () => {
    const tokensBefore = (await t.ctx.db('password_reset_tokens').select('id')).length;
    const known = await ask(t.cast.owner.delivery_email);
    const unknown = await ask('nobody@example.com');
    expect(unknown.status).toBe(known.status);
    expect(unknown.headers.location).toBe(known.headers.location);
    expect(unknown.headers.location).toBe(`${FORM}done/`);
    const done = await request(t.app).get(unknown.headers.location!);
    expect(done.text).toContain('<h1>Check your email</h1>');

    const [mail, ...more] = await queuedEmails(t.ctx.db, 'nobody@example.com');
    expect(more).toHaveLength(0);
    expect(mail!.text_body).toContain('There is no account with the address nobody@example.com in Test Organization.');
    expect(mail!.text_body).not.toContain(FORM);
    // One token: the known address's.
    expect((await t.ctx.db('password_reset_tokens').select('id')).length).toBe(tokensBefore + 1);

    // An address with an account in another organization of this server only.
    const elsewhere = await doCreateRealm(t.ctx.db, { stringId: 'elsewhere', name: 'Elsewhere' });
    await inTransaction(t.ctx.db, (tx) =>
      createUserInTx(tx, null, { realmId: elsewhere, email: 'roamer@example.com', fullName: 'Roamer' }),
    );
    await ask('roamer@example.com');
    const [roamer] = await queuedEmails(t.ctx.db, 'roamer@example.com');
    expect(roamer!.text_body).toContain('This address has an account in these organizations');
    expect(roamer!.text_body).toContain('elsewhere.');
    expect(roamer!.text_body).not.toContain(FORM);
  });

  it('a deactivated account gets the no-account mail saying so, and no link; a bot gets no link either', async () => {
    const tokensBefore = (await t.ctx.db('password_reset_tokens').select('id')).length;
    await ask(t.cast.deactivated.delivery_email);
    const [mail] = (await queuedEmails(t.ctx.db, t.cast.deactivated.delivery_email)).slice(-1);
    expect(mail!.text_body).toContain('has been deactivated');
    expect(mail!.text_body).not.toContain(FORM);
    await ask(t.cast.bot.delivery_email);
    const [bot] = (await queuedEmails(t.ctx.db, t.cast.bot.delivery_email)).slice(-1);
    expect(bot!.text_body).not.toContain(FORM);
    expect((await t.ctx.db('password_reset_tokens').select('id')).length).toBe(tokensBefore);
  });

  it('an invalid address shows the form again with an error, and mails nothing', async () => {
    const before = (await queuedEmails(t.ctx.db)).length;
    const res = await ask('not an address<b>');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<p class="error">Enter a valid email address.</p>');
    expect(res.text).toContain('value="not an address&#60;b&#62;"');
    expect(await queuedEmails(t.ctx.db)).toHaveLength(before);
  });

  it('the link goes out in the account’s language setting; the no-account mail in the organization’s', async () => {
    const user = t.cast.owner;
    expect((await t.api.patch('/settings', user, { default_language: 'de' })).status).toBe(200);
    const path = await resetLink(user.delivery_email);
    const [mail] = (await queuedEmails(t.ctx.db, user.delivery_email)).slice(-1);
    expect(mail!.subject).toBe('Passwort zurücksetzen für Test Organization');
    expect(mail!.text_body).toContain(`${t.ctx.config.externalUrl}${path}`);
    await t.ctx.db('realms').where({ id: t.realmId }).update({ default_language: 'de' });
    try {
      await ask('stranger@example.com');
      const [note] = await queuedEmails(t.ctx.db, 'stranger@example.com');
      expect(note!.text_body).toContain('In Test Organization gibt es kein Konto mit der Adresse stranger@example.com.');
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ default_language: 'en' });
    }
  });

  it('no mail when the organization does not take passwords; the same answer', async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ password_auth_enabled: false });
    try {
      const before = (await queuedEmails(t.ctx.db)).length;
      const res = await ask(t.cast.member.delivery_email);
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`${FORM}done/`);
      expect(await queuedEmails(t.ctx.db)).toHaveLength(before);
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ password_auth_enabled: true });
    }
  });

  it('the access log never shows a link’s token', () => {
    expect(redactUrl('/accounts/password/reset/abcDEF123_-/')).toBe('/accounts/password/reset/[Redacted]/');
    expect(redactUrl('/accounts/password/reset/done/')).toBe('/accounts/password/reset/done/');
    expect(redactUrl('/accounts/password/reset/')).toBe('/accounts/password/reset/');
  });
});

eachDatabase('password reset rate limits', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { config: { rateLimits: true, rateLimitStore: 'memory', trustedProxies: ['loopback'] } });
  });
  afterAll(() => t.close());

  const ask = (email: string, ip: string) => request(t.app).post(FORM).type('form').set('X-Forwarded-For', ip).send({ email });

  it('two reset mails an hour per address, then a 429 page and no mail; per client address five a day', async () => {
    const email = t.cast.member.delivery_email;
    expect((await ask(email, '10.0.0.1')).status).toBe(303);
    expect((await ask(email.toUpperCase(), '10.0.0.2')).status).toBe(303);
    const refused = await ask(email, '10.0.0.3');
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.text).toMatch(/Try again in\s+\d+ seconds/);
    expect(await queuedEmails(t.ctx.db, email)).toHaveLength(2);
  });

  it('five reset requests a day from one client address, whatever the addresses asked for; then a 429 page', async () => {
    for (let i = 0; i < 5; i++) expect((await ask(`someone${i}@example.com`, '10.0.1.1')).status).toBe(303);
    const refused = await ask('someone5@example.com', '10.0.1.1');
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('<h1>Too many requests</h1>');
    expect(await queuedEmails(t.ctx.db, 'someone5@example.com')).toHaveLength(0);
    // Another client is not held back by it.
    expect((await ask('someone5@example.com', '10.0.1.2')).status).toBe(303);
  });
});
