import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { doDeactivateUser } from '../src/actions/users';
import { hashSessionKey } from '../src/domain/sessions';
import { WEB_APP_POLICY } from '../src/http/web-app';
import type { UserRow } from '../src/queries/rows';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { CAST_PASSWORD, startTestServer, TestServer } from './support/server';
import { tempDataDir, uploadFiles } from './support/uploads';

/**
 * Browser sessions (ADR 0053): the login page's cookies, /json with the
 * session cookie and its CSRF token, logout, expiry, the sessions' list and
 * revocation, the ends a password change and a deactivation make, the web
 * client at `/` and its assets, and files read with the cookie.
 */

interface Login {
  /** The Cookie header a browser would send. */
  cookie: string;
  csrf: string;
  key: string;
  setCookie: string[];
  location: string;
}

const cookieValue = (setCookie: string[], name: string) => {
  const line = setCookie.find((c) => c.startsWith(`${name}=`));
  return line ? line.slice(name.length + 1).split(';')[0]! : undefined;
};

async function logIn(t: TestServer, user: UserRow, fields: Record<string, string> = {}, host?: string): Promise<Login> {
  let req = request(t.app).post('/login/').type('form');
  if (host) req = req.set('Host', host);
  const res = await req.send({ username: user.delivery_email, password: CAST_PASSWORD, ...fields });
  expect(res.status).toBe(302);
  const setCookie = res.headers['set-cookie'] as unknown as string[];
  const key = cookieValue(setCookie, 'sessionid')!;
  const csrf = cookieValue(setCookie, 'csrftoken')!;
  return { cookie: `sessionid=${key}; csrftoken=${csrf}`, csrf, key, setCookie, location: res.headers.location! };
}

eachDatabase('browser sessions', (dialect) => {
  let t: TestServer;
  let contract: ContractChecker;
  const data = tempDataDir();
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-web-dist-'));
  const script = `console.log(${JSON.stringify('x'.repeat(2000))});\n`;
  beforeAll(async () => {
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><script type="module" src="/static/assets/index-abc123.js"></script>');
    fs.writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), script);
    fs.writeFileSync(path.join(dist, 'assets', 'logo-def456.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    fs.writeFileSync(path.join(dist, 'secret.txt'), 'not an asset');
    t = await startTestServer(dialect, undefined, { dataDir: data.dir, config: { webDistDir: dist } });
    contract = new ContractChecker(t.spec);
  });
  afterAll(async () => {
    await t.close();
    data.remove();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  /** A /json request as a browser makes it, the answer checked against the contract. */
  async function json(
    method: 'get' | 'post' | 'patch' | 'delete',
    url: string,
    cookie: string | null,
    opts: { csrf?: string; fields?: Record<string, string> } = {},
  ) {
    let req = request(t.app)[method](`/json${url}`);
    if (cookie) req = req.set('Cookie', cookie);
    if (opts.csrf !== undefined) req = req.set('X-CSRFToken', opts.csrf);
    if (opts.fields) req = method === 'get' ? req.query(opts.fields) : req.type('form').send(opts.fields);
    const res = await req;
    contract.check(method, `/json${url}`, res.status, res.body);
    return res;
  }

  it('a login sets sessionid (HttpOnly) and csrftoken (readable), SameSite=Lax, Path=/, for the session age, and goes to /', async () => {
    const login = await logIn(t, t.cast.member);
    expect(login.location).toBe('/');
    const session = login.setCookie.find((c) => c.startsWith('sessionid='))!;
    const csrf = login.setCookie.find((c) => c.startsWith('csrftoken='))!;
    expect(session).toMatch(/; Max-Age=1209600; /);
    expect(session).toContain('; Path=/; SameSite=Lax; HttpOnly');
    expect(csrf).toContain('; Path=/; SameSite=Lax');
    expect(csrf).not.toContain('HttpOnly');
    // Served over http: no Secure flag.
    expect(session).not.toContain('Secure');
    // Only the key's hash is stored.
    const row = await t.ctx
      .db('sessions')
      .where({ key_hash: hashSessionKey(login.key) })
      .first();
    expect(row).toMatchObject({ user_id: t.cast.member.id, realm_id: t.realmId, csrf_token: login.csrf });
    expect(await t.ctx.db('sessions').where({ key_hash: login.key }).first()).toBeUndefined();
  });

  it("a login form posted from another site's page is refused (login CSRF); this site's own is taken", async () => {
    const post = (headers: Record<string, string>) =>
      request(t.app).post('/login/').set(headers).type('form').send({ username: t.cast.member.delivery_email, password: CAST_PASSWORD });
    const host = new URL(t.ctx.config.externalUrl).host;
    const crossSite: Record<string, string>[] = [
      { Origin: 'https://evil.example' },
      { 'Sec-Fetch-Site': 'cross-site' },
      { Origin: 'null' },
    ];
    for (const headers of crossSite) {
      const refused = await post(headers);
      expect(refused.status).toBe(403);
      expect(refused.headers['set-cookie']).toBeUndefined();
      expect(refused.text).toContain('CSRF');
    }
    const own = await post({ Origin: `http://${host}`, 'Sec-Fetch-Site': 'same-origin', Host: host });
    expect(own.status).toBe(302);
    expect(own.headers['set-cookie']).toEqual(expect.arrayContaining([expect.stringMatching(/^sessionid=/)]));
  });

  it('a login goes to a `next` path of this site, never to another site', async () => {
    expect((await logIn(t, t.cast.member, { next: '/#narrow/channel/1' })).location).toBe('/#narrow/channel/1');
    expect((await logIn(t, t.cast.member, { next: '//evil.example/' })).location).toBe('/');
    expect((await logIn(t, t.cast.member, { next: '/\\evil.example/' })).location).toBe('/');
    expect((await logIn(t, t.cast.member, { next: 'https://evil.example/' })).location).toBe('/');
    const form = await request(t.app).get('/login/?next=/%23narrow');
    expect(form.text).toContain('<input type="hidden" name="next" value="/#narrow">');
  });

  it('/json takes the session cookie; without one it is 401 with a Session challenge; Basic auth is no session', async () => {
    const login = await logIn(t, t.cast.member);
    const me = await json('get', '/users/me', login.cookie);
    expect(me.status).toBe(200);
    expect(me.body.user_id).toBe(t.cast.member.id);
    for (const cookie of [null, 'sessionid=not-a-key', `csrftoken=${login.csrf}`]) {
      const refused = await json('get', '/users/me', cookie);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ code: 'UNAUTHORIZED', msg: 'Not logged in: API authentication or user session required' });
      expect(refused.headers['www-authenticate']).toBe('Session realm="zulip"');
    }
    const basic = await request(t.app).get('/json/users/me').auth(t.cast.member.email, t.cast.member.api_key);
    expect(basic.status).toBe(401);
    // A path that is no operation: the JSON 404, not the HTML page.
    const missing = await json('get', '/no/such/thing', login.cookie);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ result: 'error', msg: 'Endpoint does not exist' });
    // Incoming webhooks are /api/v1/external's alone: no operation under /json.
    const webhook = await json('post', '/external/github', login.cookie, { csrf: login.csrf, fields: {} });
    expect(webhook.status).toBe(404);
  });

  it('/json decodes and validates parameters as /api/v1 does, for an operation first called there', async () => {
    const login = await logIn(t, t.cast.member);
    // JSON in the query (narrow), integers coerced (num_before, last_event_id): the validator
    // must find the operation under /json too, or a handler gets text.
    const page = await json('get', '/messages', login.cookie, {
      fields: { anchor: 'newest', num_before: '2', num_after: '0', narrow: JSON.stringify([{ operator: 'is', operand: 'dm' }]) },
    });
    expect(page.status).toBe(200);
    expect(page.body.found_newest).toBe(true);
    const bad = await json('get', '/messages', login.cookie, { fields: { anchor: 'newest', num_before: 'many', num_after: '0' } });
    expect(bad.status).toBe(400);
    const queue = await json('post', '/register', login.cookie, { csrf: login.csrf, fields: { event_types: JSON.stringify(['message']) } });
    expect(queue.status).toBe(200);
    const events = await json('get', '/events', login.cookie, {
      fields: { queue_id: queue.body.queue_id, last_event_id: '-1', dont_block: 'true' },
    });
    expect(events.status).toBe(200);
    expect(events.body.events).toEqual([]);
  });

  it('an unsafe method needs the session CSRF token in X-CSRFToken; a GET needs none', async () => {
    const login = await logIn(t, t.cast.member);
    const other = await logIn(t, t.cast.member);
    const fields = { alert_words: JSON.stringify(['sessions']) };
    const missing = await json('post', '/users/me/alert_words', login.cookie, { fields });
    expect(missing.status).toBe(403);
    expect(missing.body).toEqual({
      result: 'error',
      code: 'CSRF_FAILED',
      msg: 'CSRF error: CSRF token missing.',
      reason: 'CSRF token missing.',
    });
    const wrong = await json('post', '/users/me/alert_words', login.cookie, { csrf: other.csrf, fields });
    expect(wrong.status).toBe(403);
    expect(wrong.body.msg).toBe("CSRF error: CSRF token from the 'X-Csrftoken' HTTP header incorrect.");
    const short = await json('post', '/users/me/alert_words', login.cookie, { csrf: 'abc', fields });
    expect(short.body.reason).toBe("CSRF token from the 'X-Csrftoken' HTTP header has incorrect length.");
    const ok = await json('post', '/users/me/alert_words', login.cookie, { csrf: login.csrf, fields });
    expect(ok.status).toBe(200);
    expect(ok.body.alert_words).toContain('sessions');
    expect((await json('get', '/users/me/alert_words', login.cookie)).status).toBe(200);
  });

  it("records a session's activity at most once a minute", async () => {
    const login = await logIn(t, t.cast.member);
    const row = async () =>
      (await t.ctx
        .db('sessions')
        .where({ key_hash: hashSessionKey(login.key) })
        .first())!;
    // Written by hand, as an operator would: the caches are told (`cache flush`).
    const setLastActive = async (ms: number) => {
      await t.ctx
        .db('sessions')
        .where({ key_hash: hashSessionKey(login.key) })
        .update({ last_active_at: ms });
      t.ctx.caches.apply({ kind: 'all' });
    };
    const recent = Date.now() - 30_000;
    await setLastActive(recent);
    expect((await json('get', '/users/me', login.cookie)).status).toBe(200);
    expect(Number((await row()).last_active_at)).toBe(recent);
    await setLastActive(recent - 60_000);
    const before = Date.now();
    expect((await json('get', '/users/me', login.cookie)).status).toBe(200);
    expect(Number((await row()).last_active_at)).toBeGreaterThanOrEqual(before);
  });

  it('logout needs the CSRF token, ends the session, clears both cookies and goes to /login/', async () => {
    const login = await logIn(t, t.cast.member);
    const refused = await request(t.app).post('/accounts/logout/').set('Cookie', login.cookie).type('form').send({});
    expect(refused.status).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    const wrong = await request(t.app)
      .post('/accounts/logout/')
      .set('Cookie', login.cookie)
      .type('form')
      .send({ csrfmiddlewaretoken: 'x'.repeat(32) });
    expect(wrong.status).toBe(403);
    expect((await json('get', '/users/me', login.cookie)).status).toBe(200);
    const out = await request(t.app)
      .post('/accounts/logout/')
      .set('Cookie', login.cookie)
      .type('form')
      .send({ csrfmiddlewaretoken: login.csrf });
    expect(out.status).toBe(302);
    expect(out.headers.location).toBe('/login/');
    const cleared = out.headers['set-cookie'] as unknown as string[];
    expect(cleared.find((c) => c.startsWith('sessionid=;'))).toContain('Max-Age=0');
    expect(cleared.find((c) => c.startsWith('csrftoken=;'))).toContain('Max-Age=0');
    expect((await json('get', '/users/me', login.cookie)).status).toBe(401);
    // The header works as well as the form field.
    const second = await logIn(t, t.cast.member);
    const byHeader = await request(t.app).post('/accounts/logout/').set('Cookie', second.cookie).set('X-CSRFToken', second.csrf);
    expect(byHeader.status).toBe(302);
    expect((await json('get', '/users/me', second.cookie)).status).toBe(401);
  });

  it('lists the caller’s sessions (current marked) and revokes one at once; another user’s ID is refused', async () => {
    const a = await logIn(t, t.cast.admin);
    const b = await logIn(t, t.cast.admin);
    const list = await json('get', '/users/me/sessions', a.cookie);
    expect(list.status).toBe(200);
    const rows = list.body.sessions as Array<{ id: number; current: boolean; created: number; expires: number }>;
    expect(rows.length).toBeGreaterThanOrEqual(2);
    const current = rows.filter((s) => s.current);
    expect(current).toHaveLength(1);
    expect(current[0]!.expires - current[0]!.created).toBe(1209600);
    expect(current[0]!.created).toBeLessThan(Date.now() / 1000 + 1);
    const bId = rows.find((s) => !s.current)!.id;
    // With the API key: the same sessions, none current.
    const byKey = await t.api.get('/users/me/sessions', t.cast.admin);
    expect(byKey.body.sessions.map((s: { id: number }) => s.id)).toEqual(rows.map((s) => s.id));
    expect(byKey.body.sessions.some((s: { current: boolean }) => s.current)).toBe(false);
    // Another user's session: the same answer as a missing one.
    const owner = await logIn(t, t.cast.owner);
    const ownerId = (await json('get', '/users/me/sessions', owner.cookie)).body.sessions.find((s: { current: boolean }) => s.current).id;
    const foreign = await json('delete', `/users/me/sessions/${ownerId}`, a.cookie, { csrf: a.csrf });
    expect(foreign.status).toBe(400);
    expect(foreign.body.msg).toBe('Invalid session ID');
    expect((await json('delete', '/users/me/sessions/999999', a.cookie, { csrf: a.csrf })).body.msg).toBe('Invalid session ID');
    expect((await json('get', '/users/me', owner.cookie)).status).toBe(200);
    // Revoked: refused at once.
    expect((await json('get', '/users/me', b.cookie)).status).toBe(200);
    expect((await json('delete', `/users/me/sessions/${bId}`, a.cookie, { csrf: a.csrf })).status).toBe(200);
    expect((await json('get', '/users/me', b.cookie)).status).toBe(401);
    expect((await json('get', '/users/me', a.cookie)).status).toBe(200);
    // With an API key too.
    const c = await logIn(t, t.cast.admin);
    const cId = (await json('get', '/users/me/sessions', c.cookie)).body.sessions.find((s: { current: boolean }) => s.current).id;
    expect((await t.api.delete(`/users/me/sessions/${cId}`, t.cast.admin)).status).toBe(200);
    expect((await json('get', '/users/me', c.cookie)).status).toBe(401);
  });

  it('a password change ends every other session of the user, and renews the one that made it under a new key', async () => {
    const user = t.cast.moderator;
    const current = await logIn(t, user);
    const other = await logIn(t, user);
    const changed = await json('patch', '/settings', current.cookie, {
      csrf: current.csrf,
      fields: { old_password: CAST_PASSWORD, new_password: CAST_PASSWORD },
    });
    expect(changed.status).toBe(200);
    // The browser that changed it stays logged in, with new cookies; the old key is worth nothing.
    const setCookie = changed.headers['set-cookie'] as unknown as string[];
    const renewed = { key: cookieValue(setCookie, 'sessionid')!, csrf: cookieValue(setCookie, 'csrftoken')! };
    expect(renewed.key).toBeDefined();
    expect(renewed.key).not.toBe(current.key);
    expect(renewed.csrf).not.toBe(current.csrf);
    expect((await json('get', '/users/me', `sessionid=${renewed.key}`)).status).toBe(200);
    expect((await json('get', '/users/me', current.cookie)).status).toBe(401);
    expect((await json('get', '/users/me', other.cookie)).status).toBe(401);
    // By API key, no session is kept.
    await t.api.patch('/settings', user, { old_password: CAST_PASSWORD, new_password: CAST_PASSWORD });
    expect((await json('get', '/users/me', `sessionid=${renewed.key}`)).status).toBe(401);
  });

  it('deactivating the user ends their sessions', async () => {
    const login = await logIn(t, t.cast.guest);
    expect((await json('get', '/users/me', login.cookie)).status).toBe(200);
    await doDeactivateUser(t.ctx, t.cast.guest.id);
    expect(await t.ctx.db('sessions').where({ user_id: t.cast.guest.id })).toHaveLength(0);
    expect((await json('get', '/users/me', login.cookie)).status).toBe(401);
  });

  it('`/` serves the built client with a session (no-store, a strict policy) and sends anyone else to /login/', async () => {
    const anonymous = await request(t.app).get('/');
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.location).toBe('/login/');
    const login = await logIn(t, t.cast.member);
    const page = await request(t.app).get('/').set('Cookie', login.cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('/static/assets/index-abc123.js');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toBe(WEB_APP_POLICY);
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    const head = await request(t.app).head('/').set('Cookie', login.cookie);
    expect(head.status).toBe(200);
  });

  it('built assets: cached for a year, gzip when accepted, right types; nothing else, nothing outside', async () => {
    const gz = await request(t.app).get('/static/assets/index-abc123.js').set('Accept-Encoding', 'gzip');
    expect(gz.status).toBe(200);
    expect(gz.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(gz.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(Number(gz.headers['content-length'])).toBeLessThan(script.length);
    expect(gz.text).toBe(script);
    const plain = await request(t.app).get('/static/assets/index-abc123.js').set('Accept-Encoding', 'identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Number(plain.headers['content-length'])).toBe(script.length);
    const png = await request(t.app).get('/static/assets/logo-def456.png').set('Accept-Encoding', 'gzip');
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.headers['content-encoding']).toBeUndefined();
    for (const url of [
      '/static/assets/missing.js',
      '/static/assets/..%2fsecret.txt',
      '/static/assets/%2e%2e%2findex.html',
      '/static/secret.txt',
      '/static/assets/.hidden',
    ]) {
      const res = await request(t.app).get(url);
      expect([url, res.status]).toEqual([url, 404]);
      expect(res.text).not.toContain('not an asset');
    }
  });

  it('uploaded files and avatars are readable with the session cookie', async () => {
    const uploaded = await uploadFiles(t, t.cast.member, [{ name: 'notes.txt', content: 'hello', type: 'text/plain' }]);
    const url = uploaded.body.url as string;
    const login = await logIn(t, t.cast.member);
    const file = await request(t.app).get(url).set('Cookie', login.cookie);
    expect(file.status).toBe(200);
    expect(file.text).toBe('hello');
    expect((await request(t.app).get(url)).status).toBe(401);
    expect((await request(t.app).get(url).set('Cookie', 'sessionid=forged')).status).toBe(401);
    const avatar = await request(t.app).get(`/avatar/${t.cast.owner.id}`).set('Cookie', login.cookie);
    expect(avatar.status).toBe(302);
    expect((await request(t.app).get(`/avatar/${t.cast.owner.id}`)).status).toBe(401);
  });

  it('never lets a session call the incoming webhook, which is served under /api/v1/external only', async () => {
    const login = await logIn(t, t.cast.member);
    const res = await request(t.app)
      .post('/json/external/json')
      .set('Cookie', login.cookie)
      .set('X-CSRFToken', login.csrf)
      .type('json')
      .send({ text: 'from a browser' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ result: 'error', code: 'BAD_REQUEST', msg: 'Endpoint does not exist' });
  });
});

eachDatabase('browser sessions: expiry and https', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { config: { sessionCookieAge: 1, externalUrl: 'https://chat.example' } });
  });
  afterAll(() => t.close());

  it('cookies are Secure when the server is reached over https; an expired session is refused, and pruned at the next login', async () => {
    const login = await logIn(t, t.cast.member, {}, 'chat.example');
    expect(login.setCookie.every((c) => c.includes('; Secure'))).toBe(true);
    expect(login.setCookie[0]).toContain('Max-Age=1;');
    const me = () => request(t.app).get('/json/users/me').set('Host', 'chat.example').set('Cookie', login.cookie);
    expect((await me()).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const expired = await me();
    expect(expired.status).toBe(401);
    expect(expired.headers['www-authenticate']).toBe('Session realm="zulip"');
    expect(await t.ctx.db('sessions').where({ user_id: t.cast.member.id })).toHaveLength(1);
    await logIn(t, t.cast.member, {}, 'chat.example');
    const rows = await t.ctx.db('sessions').where({ user_id: t.cast.member.id });
    expect(rows).toHaveLength(1);
    expect(rows[0].key_hash).not.toBe(hashSessionKey(login.key));
  });
});

eachDatabase('browser sessions: the API rate limits', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { config: { rateLimits: true, rateLimitStore: 'memory', rateLimitUserPerMinute: 3 } });
  });
  afterAll(() => t.close());

  it('/json counts against the user as /api/v1 does, one count for both', async () => {
    const login = await logIn(t, t.cast.member);
    const viaJson = () => request(t.app).get('/json/users/me').set('Cookie', login.cookie);
    expect((await viaJson()).status).toBe(200);
    expect((await t.api.get('/users/me', t.cast.member)).status).toBe(200);
    const third = await viaJson();
    expect(third.status).toBe(200);
    expect(third.headers['x-ratelimit-remaining']).toBe('0');
    const refused = await viaJson();
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMIT_HIT');
  });

  it('a login in a browser that holds a session ends that session first, as Django does', async () => {
    const first = await logIn(t, t.cast.admin);
    const res = await request(t.app)
      .post('/login/')
      .set('Cookie', first.cookie)
      .type('form')
      .send({ username: t.cast.admin.delivery_email, password: CAST_PASSWORD });
    expect(res.status).toBe(302);
    expect(
      await t.ctx
        .db('sessions')
        .where({ key_hash: hashSessionKey(first.key) })
        .first(),
    ).toBeUndefined();
    expect(await t.ctx.db('sessions').where({ user_id: t.cast.admin.id })).toHaveLength(1);
  });
});
