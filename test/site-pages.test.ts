import request from 'supertest';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';

/**
 * The HTML a browser gets outside the API: the organization's page at `/`,
 * the page an unusable invitation link opens (test/signup-pages.test.ts has
 * the sign-up forms), a 404 page for any other path; the
 * API's unknown paths still answer Zulip's JSON error.
 */
eachDatabase('site pages', (dialect) => {
  let t: TestServer;
  let realmName: string;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    realmName = (await t.ctx.db('realms').where({ id: t.realmId }).first())!.name;
  });
  afterAll(() => t.close());

  const keyOf = (link: string) => /\/join\/([^/]+)\/$/.exec(link)![1]!;

  it('`/` names the organization the host addresses, with links to the apps and the API reference', async () => {
    const res = await request(t.app).get('/').set('Host', 'localhost:9991');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.text).toContain(`<h1>${realmName}</h1>`);
    expect(res.text).toContain('<a href="/api/docs">');
    expect(res.text).toContain('<a href="https://zulip.com/apps/">');
    expect(res.text).toContain('<code>http://localhost:9991</code>');
    // The Host header is the visitor's to choose: it is escaped like any text.
    const odd = await request(t.app).get('/').set('Host', 'x"><b>y');
    expect(odd.text).toContain('<code>http://x&#34;&#62;&#60;b&#62;y</code>');
  });

  it('an unknown, revoked or malformed invitation key gets the same 404 page', async () => {
    const made = await t.api.post('/invites/multiuse', t.cast.admin, {});
    const key = keyOf(made.body.invite_link as string);
    await t.ctx.db('multiuse_invites').where({ link_key: key }).update({ revoked: true });
    for (const path of [`/join/${key}/`, '/join/nosuchkey0000000000000000/', '/join/%3Cscript%3E']) {
      const res = await request(t.app).get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('The invitation link has expired or is not valid.');
      expect(res.text).not.toContain('<script>');
    }
  });

  it('any other path outside the API gets a small HTML 404; the API keeps its JSON 404', async () => {
    const page = await request(t.app).get('/no/such/page');
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<h1>Page not found</h1>');
    expect(page.text).not.toContain('Cannot GET');
    const api = await request(t.app).get('/api/v1/no/such/endpoint');
    expect(api.status).toBe(404);
    expect(api.body).toEqual({ result: 'error', msg: 'Endpoint does not exist', code: 'BAD_REQUEST' });
  });

  it('a host that addresses no organization gets a page saying so', async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ deactivated: true });
    try {
      const res = await request(t.app).get('/');
      expect(res.status).toBe(404);
      expect(res.text).toContain('There is no organization at this address.');
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ deactivated: false });
    }
  });
});
