import { eachDatabase } from './support/databases';
import { pushKeyOf, registration, TestRelay, tokenIdOf } from './support/push-relay';
import { startTestServer, type TestServer } from './support/server';

const refusal = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

eachDatabase('POST /mobile_push/register', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 10, pushRelayMaxAttempts: 3 } });
  });
  afterAll(async () => {
    await t.close();
    await relay.close();
  });

  const devicesOf = (userId: number) =>
    t.ctx
      .db('push_devices')
      .where({ user_id: userId })
      .orderBy('device_id')
      .select(
        'device_id',
        'push_key_id',
        'push_key',
        'token_kind',
        'token_id',
        'bouncer_public_key',
        'encrypted_push_registration',
        'relay_device_id',
      );
  const snapshot = async () => ({
    devices: await t.ctx.db('push_devices').orderBy('id').select('*'),
    tokens: await t.ctx.db('push_tokens').orderBy('id').select('*'),
  });
  const register = (who = t.cast.member, fields: Record<string, unknown>) => t.api.post('/mobile_push/register', who, fields);
  const settle = () => t.ctx.push!.whenIdle();

  it('stores a first registration and forwards it to the relay, which names the device', async () => {
    const fields = registration(1);
    const res = await register(t.cast.member, fields);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: 'success', msg: '' });
    await settle();
    const forwarded = relay.to(TestRelay.REGISTER);
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]!.body).toEqual({
      realm_url: t.ctx.config.externalUrl,
      user_id: t.cast.member.id,
      device_id: 1,
      token_kind: 'fcm',
      token_id: fields.token_id,
      bouncer_public_key: fields.bouncer_public_key,
      encrypted_push_registration: fields.encrypted_push_registration,
    });
    const [row] = await devicesOf(t.cast.member.id);
    expect(row).toMatchObject({
      device_id: 1,
      push_key_id: fields.push_key_id,
      push_key: fields.push_key,
      token_kind: 'fcm',
      token_id: fields.token_id,
    });
    expect(Number(row.relay_device_id)).toBeGreaterThanOrEqual(9000);
  });

  it('repeating an identical registration succeeds and changes nothing', async () => {
    const before = await snapshot();
    const sent = relay.requests.length;
    const res = await register(t.cast.member, registration(1));
    expect(res.status).toBe(200);
    await settle();
    expect(relay.requests).toHaveLength(sent);
    expect(await snapshot()).toEqual(before);
  });

  it('rotates the key with the key fields alone, keeping the token and the relay id', async () => {
    const [before] = await devicesOf(t.cast.member.id);
    const sent = relay.requests.length;
    const res = await register(t.cast.member, { device_id: 1, push_key: pushKeyOf(77), push_key_id: 4294967295 });
    expect(res.status).toBe(200);
    await settle();
    expect(relay.requests).toHaveLength(sent);
    expect(await devicesOf(t.cast.member.id)).toEqual([{ ...before, push_key: pushKeyOf(77), push_key_id: 4294967295 }]);
  });

  it('rotates the token with the token fields alone: pending until the relay confirms it', async () => {
    const next = registration(1, { token: 'rotated-token' });
    const tokenFields = {
      device_id: 1,
      token_kind: 'apns',
      token_id: next.token_id,
      bouncer_public_key: next.bouncer_public_key,
      encrypted_push_registration: next.encrypted_push_registration,
    };
    relay.script.set(TestRelay.REGISTER, [503]);
    const res = await register(t.cast.member, tokenFields);
    expect(res.status).toBe(200);
    const [pending] = await devicesOf(t.cast.member.id);
    expect(pending).toMatchObject({ token_kind: 'apns', token_id: next.token_id, push_key: pushKeyOf(77), relay_device_id: null });
    await settle();
    const attempts = relay.to(TestRelay.REGISTER).slice(-2);
    expect(attempts.map((r) => r.status)).toEqual([503, 200]);
    expect(attempts[1]!.body).toMatchObject({ device_id: 1, token_kind: 'apns', token_id: next.token_id });
    const [confirmed] = await devicesOf(t.cast.member.id);
    expect(confirmed.relay_device_id).not.toBeNull();
  });

  it('forwards a registration again when the relay refused it, until it confirms', async () => {
    relay.script.set(TestRelay.REGISTER, [400]);
    const fields = registration(7);
    expect((await register(t.cast.owner, fields)).status).toBe(200);
    await settle();
    // A refusal is not retried: the device stays pending.
    expect(relay.to(TestRelay.REGISTER).slice(-1)[0]!.status).toBe(400);
    const pending = await t.ctx.db('push_devices').where({ user_id: t.cast.owner.id, device_id: 7 }).first();
    expect(pending.relay_device_id).toBeNull();
    const sent = relay.to(TestRelay.REGISTER).length;
    expect((await register(t.cast.owner, fields)).status).toBe(200);
    await settle();
    expect(relay.to(TestRelay.REGISTER)).toHaveLength(sent + 1);
    const confirmed = await t.ctx.db('push_devices').where({ user_id: t.cast.owner.id, device_id: 7 }).first();
    expect(confirmed.relay_device_id).not.toBeNull();
  });

  it('keeps each user’s device ids apart', async () => {
    const res = await register(t.cast.admin, registration(1, { keySeed: 5 }));
    expect(res.status).toBe(200);
    expect(await devicesOf(t.cast.admin.id)).toEqual([expect.objectContaining({ device_id: 1, push_key: pushKeyOf(5) })]);
    expect(await devicesOf(t.cast.member.id)).toEqual([expect.objectContaining({ device_id: 1, push_key: pushKeyOf(77) })]);
  });

  describe('legacy registrations of the same token (feature level 483)', () => {
    const TOKEN = 'ab'.repeat(32);
    const OTHER = 'cd'.repeat(32);

    it('removes the caller’s legacy token that the new registration names, and only it', async () => {
      for (const token of [TOKEN, OTHER]) {
        const res = await t.api.post('/users/me/apns_device_token', t.cast.moderator, { token, appid: 'org.example.parley' });
        expect(res.status).toBe(200);
      }
      await t.api.post('/users/me/apns_device_token', t.cast.guest, { token: TOKEN, appid: 'org.example.parley' });
      const legacy = (userId: number) => t.ctx.db('push_tokens').where({ user_id: userId }).orderBy('id').pluck('token');
      expect(await legacy(t.cast.moderator.id)).toEqual([TOKEN, OTHER]);

      const res = await register(t.cast.moderator, registration(3, { token: TOKEN, kind: 'apns' }));
      expect(res.status).toBe(200);
      expect(await legacy(t.cast.moderator.id)).toEqual([OTHER]);
      // Another user's registration of the same token is theirs.
      expect(await legacy(t.cast.guest.id)).toEqual([TOKEN]);
    });

    it('leaves a legacy token of another kind', async () => {
      const res = await register(t.cast.moderator, registration(4, { token: OTHER, kind: 'fcm' }));
      expect(res.status).toBe(200);
      expect(await t.ctx.db('push_tokens').where({ user_id: t.cast.moderator.id }).pluck('token')).toEqual([OTHER]);
    });

    it('removes it on a token rotation too', async () => {
      const next = registration(4, { token: OTHER, kind: 'apns' });
      const { push_key: _k, push_key_id: _i, ...tokenFields } = next;
      const res = await register(t.cast.moderator, tokenFields);
      expect(res.status).toBe(200);
      expect(await t.ctx.db('push_tokens').where({ user_id: t.cast.moderator.id }).pluck('token')).toEqual([]);
    });
  });

  describe('refusals (nothing stored, nothing forwarded)', () => {
    const full = registration(20);
    const { push_key: _pk, push_key_id: _pki, ...tokenOnly } = full;
    const keyOnly = { device_id: 20, push_key: full.push_key, push_key_id: full.push_key_id };
    const missing = 'Missing parameters: must provide either all push key fields, all token fields, or both.';
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['neither group', { device_id: 20 }, missing],
      ['push_key without push_key_id', { device_id: 20, push_key: full.push_key }, missing],
      ['push_key_id without push_key', { device_id: 20, push_key_id: 3 }, missing],
      ['three of the four token fields', { ...tokenOnly, encrypted_push_registration: undefined }, missing],
      ['the key group and part of the token group', { ...keyOnly, token_kind: 'fcm' }, missing],
      ['the token group and part of the key group', { ...tokenOnly, push_key_id: 3 }, missing],
      ['a key rotation for a device never registered', keyOnly, 'No push registration exists to rotate key for.'],
      ['a token rotation for a device never registered', tokenOnly, 'No push registration exists to rotate token for.'],
      ['push_key that is not Base64', { ...full, push_key: 'not base64!' }, 'Invalid `push_key`'],
      ['push_key without its padding', { ...full, push_key: full.push_key.replace(/=+$/, '') + 'x' }, 'Invalid `push_key`'],
      [
        'push_key in URL-safe Base64',
        { ...full, push_key: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 0xfb)]).toString('base64url') },
        'Invalid `push_key`',
      ],
      [
        'push_key with a line break',
        { ...full, push_key: full.push_key.slice(0, 20) + '\n' + full.push_key.slice(20) },
        'Invalid `push_key`',
      ],
      [
        'push_key of another cryptosystem',
        { ...full, push_key: Buffer.concat([Buffer.from([0x32]), Buffer.alloc(32, 1)]).toString('base64') },
        'Invalid `push_key`',
      ],
      [
        'push_key with a 31-byte key',
        { ...full, push_key: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(31, 1)]).toString('base64') },
        'Invalid `push_key`',
      ],
      [
        'push_key with a 33-byte key',
        { ...full, push_key: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(33, 1)]).toString('base64') },
        'Invalid `push_key`',
      ],
      ['an empty push_key', { ...full, push_key: '' }, 'Invalid `push_key`'],
      ['token_id that is not Base64', { ...full, token_id: 'abc' }, '`token_id` is not Base64 encoded'],
      ['token_id of 7 bytes', { ...full, token_id: Buffer.alloc(7, 1).toString('base64') }, 'Invalid `token_id`'],
      ['token_id of 32 bytes (a whole SHA-256)', { ...full, token_id: Buffer.alloc(32, 1).toString('base64') }, 'Invalid `token_id`'],
      ['bouncer_public_key that is not Base64', { ...full, bouncer_public_key: 'key with spaces' }, 'Invalid bouncer_public_key'],
      ['an empty bouncer_public_key', { ...full, bouncer_public_key: '' }, 'Invalid bouncer_public_key'],
      [
        'encrypted_push_registration that is not Base64',
        { ...full, encrypted_push_registration: 'abc=def=' },
        'Invalid encrypted_push_registration',
      ],
    ];

    it.each(cases)('refuses %s', async (_name, fields, msg) => {
      await settle();
      const before = await snapshot();
      const sent = relay.requests.length;
      const res = await register(t.cast.member, fields);
      expect(res.body).toEqual(refusal(msg));
      expect(res.status).toBe(400);
      await settle();
      expect(await snapshot()).toEqual(before);
      expect(relay.requests).toHaveLength(sent);
    });

    it.each([
      ['an unknown token_kind', { ...full, token_kind: 'gcm' }, 'Invalid token_kind'],
      ['a negative push_key_id', { ...full, push_key_id: -1 }, 'push_key_id is too small'],
      ['a push_key_id beyond 32 bits', { ...full, push_key_id: 4294967296 }, 'push_key_id is too large'],
      ['a device_id that is not JSON', { ...full, device_id: 'phone' }, 'device_id is not valid JSON'],
      ['a device_id that is not an integer', { ...full, device_id: 1.5 }, 'device_id is not an integer'],
    ])('refuses %s with the validator’s words', async (_name, fields, msg) => {
      const before = await snapshot();
      const res = await register(t.cast.member, fields);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await snapshot()).toEqual(before);
    });

    it('needs device_id', async () => {
      const { device_id: _d, ...rest } = full;
      const res = await register(t.cast.member, rest);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: "Missing 'device_id' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'device_id',
      });
    });

    it('refuses bots', async () => {
      const before = await snapshot();
      const res = await register(t.cast.bot, full);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('This endpoint does not accept bot requests.'));
      expect(await snapshot()).toEqual(before);
    });
  });

  it('the token_id of the test helper is what a client computes', () => {
    // SHA-256("x") starts 2d711642b726b044.
    expect(Buffer.from(tokenIdOf('x'), 'base64').toString('hex')).toBe('2d711642b726b044');
  });
});

eachDatabase('POST /mobile_push/register without a push relay', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('answers PUSH_SERVICE_NOT_CONFIGURED and stores nothing, even for a complete registration', async () => {
    expect(t.ctx.push).toBeNull();
    await t.api.post('/users/me/apns_device_token', t.cast.member, { token: 'ab'.repeat(32), appid: 'org.example.parley' });
    const res = await t.api.post('/mobile_push/register', t.cast.member, registration(1, { token: 'ab'.repeat(32), kind: 'apns' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('Server is not configured to use push notification service.', 'PUSH_SERVICE_NOT_CONFIGURED'));
    expect(await t.ctx.db('push_devices').count('* as n').first()).toEqual({ n: 0 });
    expect(await t.ctx.db('push_tokens').where({ user_id: t.cast.member.id }).pluck('token')).toEqual(['ab'.repeat(32)]);
  });

  it('answers it before looking at the fields', async () => {
    const res = await t.api.post('/mobile_push/register', t.cast.member, { device_id: 1 });
    expect(res.body).toEqual(refusal('Server is not configured to use push notification service.', 'PUSH_SERVICE_NOT_CONFIGURED'));
  });
});
