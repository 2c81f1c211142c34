import { PushRelay } from '../src/actions/push-relay';
import { eachDatabase } from './support/databases';
import { pending, register as registerQueue, type Client } from './support/events';
import { pushKeyOf, registerDevice, registration, TestRelay, tokenIdOf } from './support/push-relay';
import { startTestServer, type TestServer } from './support/server';

const refusal = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
const DAY = 24 * 60 * 60;

eachDatabase('POST /mobile_push/register', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  /** The member's device of the registration tests, and their event queue. */
  let phone: number;
  let queue: Client;
  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 10, pushRelayMaxAttempts: 3 } });
    queue = await registerQueue(t, t.cast.member, { event_types: ['device'] });
    phone = await registerDevice(t.api, t.cast.member);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
    await relay.close();
  });

  const deviceRow = (id: number) =>
    t.ctx
      .db('client_devices')
      .where({ id })
      .first(
        'push_key_id',
        'push_key',
        'token_kind',
        'token_id',
        'bouncer_public_key',
        'encrypted_push_registration',
        'relay_device_id',
        'confirmed_token_id',
        'pending_token_id',
        'registration_error',
      );
  const snapshot = async () => ({
    devices: await t.ctx.db('client_devices').orderBy('id').select('*'),
    tokens: await t.ctx.db('push_tokens').orderBy('id').select('*'),
  });
  const register = (who = t.cast.member, fields: Record<string, unknown>) => t.api.post('/mobile_push/register', who, fields);
  const settle = () => t.ctx.push!.whenIdle();
  /** What POST /register's `devices` says of a device of the member's now. */
  const stateOf = async (id: number) =>
    (await registerQueue(t, t.cast.member, { fetch_event_types: ['device'] })).state.devices[String(id)];
  const deviceEvents = async () => (await pending(t, queue)).filter((e) => e.type === 'device');

  it('registers a device: stored, forwarded after the commit, pending, then confirmed by the relay', async () => {
    await deviceEvents();
    const fields = registration(phone);
    const res = await register(t.cast.member, fields);
    expect([res.status, res.body]).toEqual([200, { result: 'success', msg: '' }]);
    await settle();
    const forwarded = relay.to(TestRelay.REGISTER);
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]!.body).toEqual({
      realm_url: t.ctx.config.externalUrl,
      user_id: t.cast.member.id,
      device_id: phone,
      token_kind: 'fcm',
      token_id: fields.token_id,
      bouncer_public_key: fields.bouncer_public_key,
      encrypted_push_registration: fields.encrypted_push_registration,
    });
    const row = await deviceRow(phone);
    expect(row).toMatchObject({ push_key_id: fields.push_key_id, push_key: fields.push_key, token_kind: 'fcm', token_id: fields.token_id });
    expect(Number(row!.relay_device_id)).toBeGreaterThanOrEqual(9000);
    // The apps follow the registration through device update events: pending, then confirmed.
    const events = await deviceEvents();
    expect(events).toEqual([
      {
        id: expect.any(Number),
        type: 'device',
        op: 'update',
        device_id: phone,
        push_key_id: fields.push_key_id,
        pending_push_token_id: fields.token_id,
        push_token_last_updated_timestamp: expect.any(Number),
        push_registration_error_code: null,
      },
      {
        id: expect.any(Number),
        type: 'device',
        op: 'update',
        device_id: phone,
        push_token_id: fields.token_id,
        pending_push_token_id: null,
      },
    ]);
    expect(await stateOf(phone)).toEqual({
      push_key_id: fields.push_key_id,
      push_token_id: fields.token_id,
      pending_push_token_id: null,
      push_token_last_updated_timestamp: events[0]!.push_token_last_updated_timestamp,
      push_registration_error_code: null,
    });
  });

  it('repeating an identical registration succeeds and changes nothing', async () => {
    const before = await snapshot();
    const sent = relay.requests.length;
    const res = await register(t.cast.member, registration(phone));
    expect(res.status).toBe(200);
    await settle();
    expect(relay.requests).toHaveLength(sent);
    expect(await snapshot()).toEqual(before);
    expect(await deviceEvents()).toEqual([]);
  });

  it('rotates the key with the key fields alone, keeping the token and the relay id', async () => {
    const before = await deviceRow(phone);
    const sent = relay.requests.length;
    const res = await register(t.cast.member, { device_id: phone, push_key: pushKeyOf(77), push_key_id: 4294967295 });
    expect(res.status).toBe(200);
    await settle();
    expect(relay.requests).toHaveLength(sent);
    expect(await deviceRow(phone)).toEqual({ ...before, push_key: pushKeyOf(77), push_key_id: 4294967295 });
    expect(await deviceEvents()).toEqual([
      { id: expect.any(Number), type: 'device', op: 'update', device_id: phone, push_key_id: 4294967295 },
    ]);
  });

  it('rotates the token with the token fields alone: pending until the relay confirms it, retried when the relay fails', async () => {
    const old = await deviceRow(phone);
    const next = registration(phone, { token: 'rotated-token' });
    const tokenFields = {
      device_id: phone,
      token_kind: 'apns',
      token_id: next.token_id,
      bouncer_public_key: next.bouncer_public_key,
      encrypted_push_registration: next.encrypted_push_registration,
    };
    relay.script.set(TestRelay.REGISTER, [503]);
    const res = await register(t.cast.member, tokenFields);
    expect(res.status).toBe(200);
    const pendingRow = await deviceRow(phone);
    // Notifications keep going to the confirmed token meanwhile (its relay id stays), as in Zulip.
    expect(pendingRow).toMatchObject({
      token_kind: 'apns',
      token_id: next.token_id,
      pending_token_id: next.token_id,
      push_key: pushKeyOf(77),
      relay_device_id: old!.relay_device_id,
    });
    // The token confirmed before is still the one reported as registered, the new one pending.
    expect(await stateOf(phone)).toMatchObject({ push_token_id: old!.token_id, pending_push_token_id: next.token_id });
    await settle();
    const attempts = relay.to(TestRelay.REGISTER).slice(-2);
    expect(attempts.map((r) => r.status)).toEqual([503, 200]);
    expect(attempts[1]!.body).toMatchObject({ device_id: phone, token_kind: 'apns', token_id: next.token_id });
    expect((await deviceRow(phone))!.relay_device_id).not.toBeNull();
    expect(await stateOf(phone)).toMatchObject({ push_token_id: next.token_id, pending_push_token_id: null });
    const events = await deviceEvents();
    expect(events.map((e) => Object.keys(e).sort())).toEqual([
      ['device_id', 'id', 'op', 'pending_push_token_id', 'push_registration_error_code', 'push_token_last_updated_timestamp', 'type'],
      ['device_id', 'id', 'op', 'pending_push_token_id', 'push_token_id', 'type'],
    ]);
  });

  it('keeps notifying the confirmed token while a new one is pending and after the relay refused it', async () => {
    const { admin, owner } = t.cast;
    const device = await registerDevice(t.api, admin);
    expect((await register(admin, registration(device, { token: 'kept' }))).status).toBe(200);
    await settle();
    const dm = async () => {
      const before = relay.delivered().length;
      expect((await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([admin.id]), content: 'ping' })).status).toBe(200);
      await settle();
      return relay.delivered().length - before;
    };
    expect(await dm()).toBe(1);
    const { push_key: _k, push_key_id: _i, ...rotation } = registration(device, { token: 'refused' });
    relay.script.set(TestRelay.REGISTER, [400]);
    relay.delays.set(TestRelay.REGISTER, [600]);
    expect((await register(admin, rotation)).status).toBe(200);
    // Pending: the DM still reaches the phone through the token confirmed before.
    const before = relay.delivered().length;
    expect((await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([admin.id]), content: 'during' })).status).toBe(200);
    await settle();
    expect(relay.delivered().length - before).toBe(1);
    // Refused: still through the old token, which stays the registered one.
    expect(await deviceRow(device)).toMatchObject({ confirmed_token_id: tokenIdOf('kept'), registration_error: 'BAD_REQUEST' });
    expect(await dm()).toBe(1);
    // Sending the confirmed token again after the refusal is a registration in progress like any other.
    relay.delays.set(TestRelay.REGISTER, [600]);
    const { push_key: _k2, push_key_id: _i2, ...again } = registration(device, { token: 'kept' });
    expect((await register(admin, again)).status).toBe(200);
    const admins = await registerQueue(t, admin, { fetch_event_types: ['device'] });
    expect(admins.state.devices[String(device)]).toMatchObject({
      push_token_id: tokenIdOf('kept'),
      pending_push_token_id: tokenIdOf('kept'),
      push_registration_error_code: null,
    });
    const meanwhile = await register(admin, registration(device, { token: 'third' }));
    expect([meanwhile.status, meanwhile.body]).toEqual([400, refusal('A registration for the device already in progress.')]);
    await settle();
    expect(await deviceRow(device)).toMatchObject({
      confirmed_token_id: tokenIdOf('kept'),
      pending_token_id: null,
      registration_error: null,
    });
  });

  it('sends again at start the registrations a stopped process left unanswered', async () => {
    const device = await registerDevice(t.api, t.cast.guest);
    const now = Math.floor(Date.now() / 1000);
    // Fixture: a registration committed by a process that stopped before forwarding it.
    const lost = registration(device, { token: 'left-behind' });
    await t.ctx
      .db('client_devices')
      .where({ id: device })
      .update({
        push_key_id: lost.push_key_id,
        push_key: lost.push_key,
        token_kind: 'fcm',
        token_id: lost.token_id,
        pending_token_id: lost.token_id,
        bouncer_public_key: lost.bouncer_public_key,
        encrypted_push_registration: lost.encrypted_push_registration,
        token_updated_at: now - 60,
      });
    const sent = relay.to(TestRelay.REGISTER).length;
    const restarted = new PushRelay(t.ctx.db, t.ctx.bus, t.ctx.config);
    restarted.start();
    try {
      // Its start reads the device set and the unanswered registrations; wait for the forward.
      for (let i = 0; i < 100 && relay.to(TestRelay.REGISTER).length === sent; i++) await new Promise((r) => setTimeout(r, 20));
      await restarted.whenIdle();
    } finally {
      restarted.stop();
    }
    const forwarded = relay.to(TestRelay.REGISTER).slice(sent);
    expect(forwarded.map((r) => r.body.device_id)).toContain(device);
    expect(await deviceRow(device)).toMatchObject({ confirmed_token_id: lost.token_id, pending_token_id: null });
  });

  it('refuses a second token while one is pending, and takes it once the relay refused the first', async () => {
    const device = await registerDevice(t.api, t.cast.owner);
    // The relay holds its answer: the first registration stays pending meanwhile.
    relay.delays.set(TestRelay.REGISTER, [800]);
    relay.script.set(TestRelay.REGISTER, [400]);
    relay.refusalCodes.set(TestRelay.REGISTER, 'INVALID_BOUNCER_PUBLIC_KEY');
    try {
      expect((await register(t.cast.owner, registration(device, { token: 'first' }))).status).toBe(200);
      const second = await register(t.cast.owner, registration(device, { token: 'second' }));
      expect([second.status, second.body]).toEqual([400, refusal('A registration for the device already in progress.')]);
      await settle();
      // A refusal is not retried: the device reports it, and may register again.
      expect(relay.to(TestRelay.REGISTER).slice(-1)[0]!.status).toBe(400);
      expect(await deviceRow(device)).toMatchObject({ relay_device_id: null, registration_error: 'INVALID_BOUNCER_PUBLIC_KEY' });
      const owner = await registerQueue(t, t.cast.owner, { fetch_event_types: ['device'] });
      expect(owner.state.devices[String(device)]).toMatchObject({
        push_token_id: null,
        pending_push_token_id: tokenIdOf('first'),
        push_registration_error_code: 'INVALID_BOUNCER_PUBLIC_KEY',
      });
    } finally {
      relay.refusalCodes.delete(TestRelay.REGISTER);
    }
    expect((await register(t.cast.owner, registration(device, { token: 'second' }))).status).toBe(200);
    await settle();
    expect(await deviceRow(device)).toMatchObject({
      token_id: tokenIdOf('second'),
      confirmed_token_id: tokenIdOf('second'),
      registration_error: null,
    });
  });

  it('counts a token pending for a day as expired: reported so, and registered again', async () => {
    const device = await registerDevice(t.api, t.cast.admin);
    // Fixture: a registration whose relay job was lost with its process a day ago.
    await t.ctx
      .db('client_devices')
      .where({ id: device })
      .update({
        push_key_id: 1,
        push_key: pushKeyOf(1),
        token_kind: 'fcm',
        token_id: tokenIdOf('lost'),
        pending_token_id: tokenIdOf('lost'),
        bouncer_public_key: 'a2V5',
        encrypted_push_registration: 'cmVn',
        token_updated_at: Math.floor(Date.now() / 1000) - DAY - 5,
      });
    const admin = await registerQueue(t, t.cast.admin, { fetch_event_types: ['device'] });
    expect(admin.state.devices[String(device)]).toMatchObject({
      pending_push_token_id: tokenIdOf('lost'),
      push_registration_error_code: 'REQUEST_EXPIRED',
    });
    expect((await register(t.cast.admin, registration(device, { token: 'found' }))).status).toBe(200);
    await settle();
    expect(await deviceRow(device)).toMatchObject({ confirmed_token_id: tokenIdOf('found') });
  });

  it('answers a registration the relay never answers with REQUEST_EXPIRED once the attempts run out', async () => {
    const device = await registerDevice(t.api, t.cast.moderator);
    relay.script.set(TestRelay.REGISTER, [500, 502, 503]);
    expect((await register(t.cast.moderator, registration(device, { token: 'unlucky' }))).status).toBe(200);
    await settle();
    expect(await deviceRow(device)).toMatchObject({ relay_device_id: null, registration_error: 'REQUEST_EXPIRED' });
  });

  it('takes only a device the caller registered: another user’s, a removed one or an unknown id is refused alike', async () => {
    const others = await registerDevice(t.api, t.cast.admin);
    const removed = await registerDevice(t.api, t.cast.member);
    expect((await t.api.post('/remove_client_device', t.cast.member, { device_id: removed })).status).toBe(200);
    for (const id of [others, removed, 999_999]) {
      const before = await snapshot();
      const res = await register(t.cast.member, registration(id));
      expect([res.status, res.body]).toEqual([400, refusal('Invalid `device_id`')]);
      expect(await snapshot()).toEqual(before);
    }
  });

  describe('legacy registrations of the same token (feature level 483)', () => {
    const TOKEN = 'ab'.repeat(32);
    const OTHER = 'cd'.repeat(32);
    let device: number;
    let second: number;
    beforeAll(async () => {
      device = await registerDevice(t.api, t.cast.moderator);
      second = await registerDevice(t.api, t.cast.moderator);
    });
    const legacy = (userId: number) => t.ctx.db('push_tokens').where({ user_id: userId }).orderBy('id').pluck('token');

    it('removes the caller’s legacy token that the new registration names, and only it', async () => {
      for (const token of [TOKEN, OTHER]) {
        const res = await t.api.post('/users/me/apns_device_token', t.cast.moderator, { token, appid: 'org.example.parley' });
        expect(res.status).toBe(200);
      }
      await t.api.post('/users/me/apns_device_token', t.cast.guest, { token: TOKEN, appid: 'org.example.parley' });
      expect(await legacy(t.cast.moderator.id)).toEqual([TOKEN, OTHER]);

      const res = await register(t.cast.moderator, registration(device, { token: TOKEN, kind: 'apns' }));
      expect(res.status).toBe(200);
      expect(await legacy(t.cast.moderator.id)).toEqual([OTHER]);
      // Another user's registration of the same token is theirs.
      expect(await legacy(t.cast.guest.id)).toEqual([TOKEN]);
    });

    it('leaves a legacy token of another kind, and removes an FCM one its FCM registration names', async () => {
      const fcm = 'fcm-token-of-the-moderator';
      expect((await t.api.post('/users/me/android_gcm_reg_id', t.cast.moderator, { token: fcm })).status).toBe(200);
      const res = await register(t.cast.moderator, registration(second, { token: OTHER, kind: 'fcm' }));
      expect(res.status).toBe(200);
      expect(await legacy(t.cast.moderator.id)).toEqual([OTHER, fcm]);
      await settle();
      const { push_key: _k, push_key_id: _i, ...tokenFields } = registration(second, { token: fcm, kind: 'fcm' });
      expect((await register(t.cast.moderator, tokenFields)).status).toBe(200);
      expect(await legacy(t.cast.moderator.id)).toEqual([OTHER]);
    });

    it('removes it on a token rotation too', async () => {
      await settle();
      const { push_key: _k, push_key_id: _i, ...tokenFields } = registration(second, { token: OTHER, kind: 'apns' });
      const res = await register(t.cast.moderator, tokenFields);
      expect(res.status).toBe(200);
      expect(await legacy(t.cast.moderator.id)).toEqual([]);
    });
  });

  describe('refusals (nothing stored, nothing forwarded)', () => {
    let fresh: number;
    beforeAll(async () => {
      fresh = await registerDevice(t.api, t.cast.member);
    });
    const missing = 'Missing parameters: must provide either all push key fields, all token fields, or both.';
    const cases: Array<[string, (full: ReturnType<typeof registration>) => Record<string, unknown>, string]> = [
      ['neither group', (f) => ({ device_id: f.device_id }), missing],
      ['push_key without push_key_id', (f) => ({ device_id: f.device_id, push_key: f.push_key }), missing],
      ['push_key_id without push_key', (f) => ({ device_id: f.device_id, push_key_id: 3 }), missing],
      ['three of the four token fields', (f) => ({ ...tokenOnly(f), encrypted_push_registration: undefined }), missing],
      ['the key group and part of the token group', (f) => ({ ...keyOnly(f), token_kind: 'fcm' }), missing],
      ['the token group and part of the key group', (f) => ({ ...tokenOnly(f), push_key_id: 3 }), missing],
      ['a key rotation for a device never registered', keyOnly, 'No push registration exists to rotate key for.'],
      ['a token rotation for a device never registered', tokenOnly, 'No push registration exists to rotate token for.'],
      ['push_key that is not Base64', (f) => ({ ...f, push_key: 'not base64!' }), 'Invalid `push_key`'],
      ['push_key without its padding', (f) => ({ ...f, push_key: f.push_key.replace(/=+$/, '') + 'x' }), 'Invalid `push_key`'],
      [
        'push_key in URL-safe Base64',
        (f) => ({ ...f, push_key: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 0xfb)]).toString('base64url') }),
        'Invalid `push_key`',
      ],
      [
        'push_key with a line break',
        (f) => ({ ...f, push_key: f.push_key.slice(0, 20) + '\n' + f.push_key.slice(20) }),
        'Invalid `push_key`',
      ],
      [
        'push_key of another cryptosystem',
        (f) => ({ ...f, push_key: Buffer.concat([Buffer.from([0x32]), Buffer.alloc(32, 1)]).toString('base64') }),
        'Invalid `push_key`',
      ],
      [
        'push_key with a 31-byte key',
        (f) => ({ ...f, push_key: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(31, 1)]).toString('base64') }),
        'Invalid `push_key`',
      ],
      [
        'push_key with a 33-byte key',
        (f) => ({ ...f, push_key: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(33, 1)]).toString('base64') }),
        'Invalid `push_key`',
      ],
      ['an empty push_key', (f) => ({ ...f, push_key: '' }), 'Invalid `push_key`'],
      ['token_id that is not Base64', (f) => ({ ...f, token_id: 'abc' }), '`token_id` is not Base64 encoded'],
      ['token_id of 7 bytes', (f) => ({ ...f, token_id: Buffer.alloc(7, 1).toString('base64') }), 'Invalid `token_id`'],
      ['token_id of 32 bytes (a whole SHA-256)', (f) => ({ ...f, token_id: Buffer.alloc(32, 1).toString('base64') }), 'Invalid `token_id`'],
      ['bouncer_public_key that is not Base64', (f) => ({ ...f, bouncer_public_key: 'key with spaces' }), 'Invalid bouncer_public_key'],
      ['an empty bouncer_public_key', (f) => ({ ...f, bouncer_public_key: '' }), 'Invalid bouncer_public_key'],
      [
        'encrypted_push_registration that is not Base64',
        (f) => ({ ...f, encrypted_push_registration: 'abc=def=' }),
        'Invalid encrypted_push_registration',
      ],
    ];
    function tokenOnly(f: ReturnType<typeof registration>) {
      const { push_key: _pk, push_key_id: _pki, ...rest } = f;
      return rest;
    }
    function keyOnly(f: ReturnType<typeof registration>) {
      return { device_id: f.device_id, push_key: f.push_key, push_key_id: f.push_key_id };
    }

    it.each(cases)('refuses %s', async (_name, fieldsOf, msg) => {
      await settle();
      const before = await snapshot();
      const sent = relay.requests.length;
      const res = await register(t.cast.member, fieldsOf(registration(fresh)));
      expect(res.body).toEqual(refusal(msg));
      expect(res.status).toBe(400);
      await settle();
      expect(await snapshot()).toEqual(before);
      expect(relay.requests).toHaveLength(sent);
    });

    it.each([
      ['an unknown token_kind', { token_kind: 'gcm' }, 'Invalid token_kind'],
      ['a negative push_key_id', { push_key_id: -1 }, 'push_key_id is too small'],
      ['a push_key_id beyond 32 bits', { push_key_id: 4294967296 }, 'push_key_id is too large'],
      ['a device_id that is not JSON', { device_id: 'phone' }, 'device_id is not valid JSON'],
      ['a device_id that is not an integer', { device_id: 1.5 }, 'device_id is not an integer'],
      [
        'an encrypted_push_registration over 20,000 characters',
        { encrypted_push_registration: 'QUJD'.repeat(5001) },
        'encrypted_push_registration is too long (limit: 20000 characters)',
      ],
    ])('refuses %s with the validator’s words', async (_name, change, msg) => {
      const before = await snapshot();
      const res = await register(t.cast.member, { ...registration(fresh), ...change });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await snapshot()).toEqual(before);
    });

    it('needs device_id', async () => {
      const { device_id: _d, ...rest } = registration(fresh);
      const res = await register(t.cast.member, rest);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: "Missing 'device_id' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'device_id',
      });
    });

    it('refuses bots, before looking at the device', async () => {
      const botDevice = await registerDevice(t.api, t.cast.bot);
      const before = await snapshot();
      for (const id of [botDevice, 999_999]) {
        const res = await register(t.cast.bot, registration(id));
        expect([res.status, res.body]).toEqual([400, refusal('This endpoint does not accept bot requests.')]);
      }
      expect(await snapshot()).toEqual(before);
    });
  });

  it('says push notifications are enabled in GET /server_settings and POST /register, a relay being configured', async () => {
    expect((await t.api.get('/server_settings', null)).body.push_notifications_enabled).toBe(true);
    const state = (await registerQueue(t, t.cast.member, { fetch_event_types: ['realm'] })).state;
    expect(state.realm_push_notifications_enabled).toBe(true);
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
    const device = await registerDevice(t.api, t.cast.member);
    await t.api.post('/users/me/apns_device_token', t.cast.member, { token: 'ab'.repeat(32), appid: 'org.example.parley' });
    const res = await t.api.post('/mobile_push/register', t.cast.member, registration(device, { token: 'ab'.repeat(32), kind: 'apns' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('Server is not configured to use push notification service.', 'PUSH_SERVICE_NOT_CONFIGURED'));
    expect(await t.ctx.db('client_devices').whereNotNull('push_key').count('* as n').first()).toEqual({ n: 0 });
    expect(await t.ctx.db('push_tokens').where({ user_id: t.cast.member.id }).pluck('token')).toEqual(['ab'.repeat(32)]);
  });

  it('says so in GET /server_settings and POST /register, where the apps look before registering', async () => {
    expect((await t.api.get('/server_settings', null)).body.push_notifications_enabled).toBe(false);
    const state = (await t.api.post('/register', t.cast.member, { fetch_event_types: JSON.stringify(['realm']) })).body;
    expect(state.realm_push_notifications_enabled).toBe(false);
  });

  it('answers it before looking at the device or the fields', async () => {
    const res = await t.api.post('/mobile_push/register', t.cast.member, { device_id: 999_999 });
    expect(res.body).toEqual(refusal('Server is not configured to use push notification service.', 'PUSH_SERVICE_NOT_CONFIGURED'));
  });
});
