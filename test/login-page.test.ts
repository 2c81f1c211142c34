import request from 'supertest';
import { eachDatabase } from './support/databases';
import { CAST_PASSWORD, startTestServer, TestServer } from './support/server';

/**
 * The login page: the password check of POST /fetch_api_key in a form
 * (a success starts a browser session: test/sessions.test.ts), with the "Forgot your password?" link; its refusals (including the
 * per-username limit) are pages, never JSON.
 */
eachDatabase('login page', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { config: { rateLimits: true, rateLimitStore: 'memory' } });
  });
  afterAll(() => t.close());

  const logIn = (username: string, password: string) => request(t.app).post('/login/').type('form').send({ username, password });

  it('shows the form, with the link to the forgot-password form; `/` links to both', async () => {
    const page = await request(t.app).get('/login');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post" action="/login/">');
    expect(page.text).toContain('<a href="/accounts/password/reset/">Forgot your password?</a>');
    const home = await request(t.app).get('/');
    expect(home.text).toContain('<a href="/login/">');
    expect(home.text).toContain('<a href="/accounts/password/reset/">Forgot your password?</a>');
  });

  it('the right password is accepted; a wrong one, or a deactivated account, shows the error on the form', async () => {
    const ok = await logIn(t.cast.member.delivery_email, CAST_PASSWORD);
    // A browser session starts (test/sessions.test.ts) and the web app opens.
    expect(ok.status).toBe(302);
    expect(ok.headers.location).toBe('/');
    const wrong = await logIn(t.cast.moderator.delivery_email, 'not the password');
    expect(wrong.status).toBe(200);
    expect(wrong.text).toContain('<p class="error">Wrong email address or password.</p>');
    expect(wrong.text).toContain(`value="${t.cast.moderator.delivery_email}"`);
    const gone = await logIn(t.cast.deactivated.delivery_email, CAST_PASSWORD);
    expect(gone.text).toContain('This account has been deactivated.');
  });

  it('after five failures the username is refused with a 429 page, even with the right password', async () => {
    const email = t.cast.guest.delivery_email;
    for (let i = 0; i < 5; i++) expect((await logIn(email, `guess ${i}`)).status).toBe(200);
    const refused = await logIn(email, CAST_PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.text).toMatch(/Too many attempts to log in with this address. Try again in \d+ seconds/);
  });
});
