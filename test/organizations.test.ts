import request from 'supertest';
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { Role } from '../src/domain/roles';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { decryptWithPushKey, registration, TestRelay } from './support/push-relay';
import { CAST_PASSWORD, startTestServer, type TestServer } from './support/server';

/**
 * Every organization is named by its own URL (src/domain/realm-address.ts):
 * the root organization at EXTERNAL_URL, organization `acme` at EXTERNAL_URL
 * with `acme.` before the host name. The test server's EXTERNAL_URL is the
 * default, http://127.0.0.1:9991, so acme is at http://acme.localhost:9991.
 */
eachDatabase('organizations beyond the first, by their own URL', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  let acmeOwner: UserRow;
  let acmeMember: UserRow;
  const ROOT_URL = 'http://127.0.0.1:9991';
  const ACME_URL = 'http://acme.localhost:9991';
  const ACME_HOST = 'acme.localhost:9991';

  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 20 } });
    expect(t.ctx.config.externalUrl).toBe(ROOT_URL);
    const acme = await doCreateRealm(t.ctx.db, { stringId: 'acme', name: 'Acme' });
    await inTransaction(t.ctx.db, async (tx) => {
      acmeOwner = await createUserInTx(tx, null, {
        realmId: acme,
        email: 'boss@acme.example',
        fullName: 'Acme Boss',
        role: Role.OWNER,
        password: CAST_PASSWORD,
      });
      acmeMember = await createUserInTx(tx, null, { realmId: acme, email: 'worker@acme.example', fullName: 'Acme Worker' });
    });
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
    await relay.close();
  });

  /** A request to the given host, as a client of that address sends it. */
  const at = (host: string, method: 'get' | 'post', path: string, user: UserRow | null, fields: Record<string, unknown> = {}) =>
    t.api.call(method, path, user, fields, { headers: { host } });

  it("GET /server_settings at acme's host names acme and its URL; at the root's, the root organization", async () => {
    const acme = await at(ACME_HOST, 'get', '/server_settings', null);
    expect(acme.status).toBe(200);
    expect(acme.body).toMatchObject({ realm_name: 'Acme', realm_url: ACME_URL, realm_uri: ACME_URL });
    const root = await at('127.0.0.1:9991', 'get', '/server_settings', null);
    expect(root.body).toMatchObject({ realm_name: 'Test Organization', realm_url: ROOT_URL, realm_uri: ROOT_URL });
  });

  it("POST /register at acme's host answers acme's URL, bot domain and emoji data URL", async () => {
    const res = await at(ACME_HOST, 'post', '/register', acmeMember, { fetch_event_types: ['realm'] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      realm_name: 'Acme',
      realm_url: ACME_URL,
      realm_uri: ACME_URL,
      realm_bot_domain: 'acme.localhost',
      server_emoji_data_url: expect.stringMatching(new RegExp(`^${ACME_URL.replace(/\./g, '\\.')}/`)),
    });
    const root = await t.api.post('/register', t.cast.member, { fetch_event_types: ['realm'] });
    expect(root.body).toMatchObject({ realm_url: ROOT_URL, realm_bot_domain: '127.0.0.1' });
  });

  it("the URL it answers is where acme's accounts log in and authenticate", async () => {
    const login = await at(ACME_HOST, 'post', '/fetch_api_key', null, { username: acmeOwner.email, password: CAST_PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.api_key).toBe(acmeOwner.api_key);
    expect((await at(ACME_HOST, 'get', '/users/me', acmeOwner)).body.email).toBe(acmeOwner.email);
    // At the root organization's address the key means nothing.
    expect((await at('127.0.0.1:9991', 'get', '/users/me', acmeOwner)).status).toBe(401);
  });

  it("an invitation link of acme's starts with acme's URL, where its page names acme", async () => {
    const res = await at(ACME_HOST, 'post', '/invites/multiuse', acmeOwner, { invite_expires_in_minutes: 60 });
    expect(res.status).toBe(200);
    expect(res.body.invite_link).toMatch(new RegExp(`^${ACME_URL.replace(/\./g, '\\.')}/join/`));
    const link = new URL(res.body.invite_link as string);
    expect((await request(t.app).get(link.pathname).set('Host', link.host)).text).toContain('<h1>Join Acme</h1>');
    expect((await request(t.app).get('/').set('Host', ACME_HOST)).text).toContain('<h1>Acme</h1>');
  });

  it("the push relay is told acme's URL, for the registration and in the notification", async () => {
    const device = await at(ACME_HOST, 'post', '/register_client_device', acmeMember);
    expect(device.status).toBe(200);
    const fields = registration(device.body.device_id as number, { keySeed: 31 });
    expect((await at(ACME_HOST, 'post', '/mobile_push/register', acmeMember, fields)).status).toBe(200);
    await t.ctx.push!.whenIdle();
    expect(relay.requests.find((r) => r.path === TestRelay.REGISTER)!.body.realm_url).toBe(ACME_URL);

    const sent = await at(ACME_HOST, 'post', '/messages', acmeOwner, {
      type: 'direct',
      to: JSON.stringify([acmeMember.id]),
      content: 'hi',
    });
    expect(sent.status).toBe(200);
    await t.ctx.push!.whenIdle();
    const notify = relay.requests.find((r) => r.path === TestRelay.NOTIFY)!;
    expect(notify.body.realm_url).toBe(ACME_URL);
    const payload = decryptWithPushKey(notify.body.push_requests[0].encrypted_data, fields.push_key);
    expect(payload).toMatchObject({ realm_name: 'Acme', realm_url: ACME_URL, message_id: sent.body.id });
  });

  describe('with EXTERNAL_URL a host name', () => {
    let saved: string;
    beforeAll(() => {
      saved = t.ctx.config.externalUrl;
      // As main.ts sets it once it knows its port: the configuration object is read per request.
      t.ctx.config.externalUrl = 'https://chat.example.com';
    });
    afterAll(() => {
      t.ctx.config.externalUrl = saved;
    });

    it('acme is at acme. before that name', async () => {
      const res = await at('acme.chat.example.com', 'get', '/server_settings', null);
      expect(res.body).toMatchObject({ realm_name: 'Acme', realm_url: 'https://acme.chat.example.com' });
    });

    it("EXTERNAL_URL's own host is the root organization's, even beside an organization named by its first label", async () => {
      await doCreateRealm(t.ctx.db, { stringId: 'chat', name: 'Chat' });
      const res = await at('chat.example.com', 'get', '/server_settings', null);
      expect(res.body).toMatchObject({ realm_name: 'Test Organization', realm_url: 'https://chat.example.com' });
      expect((await at('chat.example.com', 'get', '/users/me', t.cast.member)).status).toBe(200);
      expect((await request(t.app).get('/').set('Host', 'chat.example.com')).text).toContain('<h1>Test Organization</h1>');
      // Any other host whose first label is "chat" is that organization's.
      expect((await at('chat.other.example', 'get', '/server_settings', null)).body.realm_name).toBe('Chat');
    });
  });
});
