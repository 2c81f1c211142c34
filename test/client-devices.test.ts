import { doRegenerateApiKey } from '../src/actions/users';
import { MAX_CLIENT_DEVICES_PER_USER } from '../src/domain/push-devices';
import { eachDatabase } from './support/databases';
import { pending, register as registerQueue } from './support/events';
import { registerDevice, registration, TestRelay } from './support/push-relay';
import { startTestServer, type TestServer } from './support/server';

const refusal = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

/** POST /register_client_device and POST /remove_client_device (feature levels 468 and 470). */
eachDatabase('the device registry', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 10, pushRelayMaxAttempts: 2 } });
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
    await relay.close();
  });

  const devicesState = async (user = t.cast.member) => (await registerQueue(t, user, { fetch_event_types: ['device'] })).state.devices;
  const empty = {
    push_key_id: null,
    push_token_id: null,
    pending_push_token_id: null,
    push_token_last_updated_timestamp: null,
    push_registration_error_code: null,
  };

  it('registers a device: a new id, an add event for the caller alone, and an empty entry in devices', async () => {
    const mine = await registerQueue(t, t.cast.member, { event_types: ['device'] });
    const theirs = await registerQueue(t, t.cast.admin, { event_types: ['device'] });
    const first = await t.api.post('/register_client_device', t.cast.member);
    const second = await t.api.post('/register_client_device', t.cast.member);
    expect(first.body).toEqual({ result: 'success', msg: '', device_id: expect.any(Number) });
    expect(second.body.device_id).toBeGreaterThan(first.body.device_id);
    expect(await pending(t, mine)).toEqual([
      { id: expect.any(Number), type: 'device', op: 'add', device_id: first.body.device_id },
      { id: expect.any(Number), type: 'device', op: 'add', device_id: second.body.device_id },
    ]);
    expect(await pending(t, theirs)).toEqual([]);
    const state = await devicesState();
    expect(state).toEqual({ [String(first.body.device_id)]: empty, [String(second.body.device_id)]: empty });
    expect(await devicesState(t.cast.admin)).toEqual({});
  });

  it('sends devices only when the device type is asked for, and always when nothing is named', async () => {
    expect((await registerQueue(t, t.cast.member, { fetch_event_types: ['message'] })).state).not.toHaveProperty('devices');
    expect(Object.keys((await registerQueue(t, t.cast.member)).state.devices).length).toBeGreaterThan(0);
  });

  it('lets bots register devices, as Zulip does', async () => {
    const res = await t.api.post('/register_client_device', t.cast.bot);
    expect(res.status).toBe(200);
    expect(Object.keys(await devicesState(t.cast.bot))).toEqual([String(res.body.device_id)]);
  });

  it('removes a device with its push registration: a remove event, no entry, no more notifications', async () => {
    const { member, owner } = t.cast;
    const device = await registerDevice(t.api, member);
    expect((await t.api.post('/mobile_push/register', member, registration(device))).status).toBe(200);
    await t.ctx.push!.whenIdle();
    const dm = async () => {
      const before = relay.delivered().length;
      expect((await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([member.id]), content: 'ping' })).status).toBe(200);
      await t.ctx.push!.whenIdle();
      return relay.delivered().length - before;
    };
    expect(await dm()).toBe(1);
    const queue = await registerQueue(t, member, { event_types: ['device'] });
    const res = await t.api.post('/remove_client_device', member, { device_id: device });
    expect([res.status, res.body]).toEqual([200, { result: 'success', msg: '' }]);
    expect(await pending(t, queue)).toEqual([{ id: expect.any(Number), type: 'device', op: 'remove', device_id: device }]);
    expect(await devicesState()).not.toHaveProperty(String(device));
    expect(await t.ctx.db('client_devices').where({ id: device }).first()).toBeUndefined();
    expect(await dm()).toBe(0);
  });

  it('refuses another user’s device, a removed one and an unknown id alike, changing nothing', async () => {
    const theirs = await registerDevice(t.api, t.cast.admin);
    const gone = await registerDevice(t.api, t.cast.member);
    await t.api.post('/remove_client_device', t.cast.member, { device_id: gone });
    for (const id of [theirs, gone, 0, 4294967295]) {
      const res = await t.api.post('/remove_client_device', t.cast.member, { device_id: id });
      expect([res.status, res.body]).toEqual([400, refusal('Invalid `device_id`')]);
    }
    expect(Object.keys(await devicesState(t.cast.admin))).toContain(String(theirs));
  });

  it('refuses a missing or malformed device_id in the validator’s words', async () => {
    const missing = await t.api.post('/remove_client_device', t.cast.member);
    expect([missing.status, missing.body]).toEqual([
      400,
      { result: 'error', msg: "Missing 'device_id' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'device_id' },
    ]);
    const text = await t.api.post('/remove_client_device', t.cast.member, { device_id: 'phone' });
    expect([text.status, text.body]).toEqual([400, refusal('device_id is not valid JSON')]);
    const big = await t.api.post('/remove_client_device', t.cast.member, { device_id: 4294967296 });
    expect([big.status, big.body]).toEqual([400, refusal('device_id is too large')]);
  });

  it('holds a user to 1,000 devices', async () => {
    const { guest } = t.cast;
    // Fixture: the devices of a user who never logs out, written directly.
    const rows = Array.from({ length: MAX_CLIENT_DEVICES_PER_USER - 1 }, () => ({ user_id: guest.id, date_created: 0 }));
    for (let i = 0; i < rows.length; i += 200) await t.ctx.db('client_devices').insert(rows.slice(i, i + 200));
    const last = await t.api.post('/register_client_device', guest);
    expect(last.status).toBe(200);
    const over = await t.api.post('/register_client_device', guest);
    expect([over.status, over.body]).toEqual([400, refusal('Too many devices registered (the limit is 1000); remove one first.')]);
    expect((await t.api.post('/remove_client_device', guest, { device_id: last.body.device_id })).status).toBe(200);
    expect((await t.api.post('/register_client_device', guest)).status).toBe(200);
  });

  it('a new API key ends the push registrations of the apps logged in with the old one (feature level 492)', async () => {
    const { moderator } = t.cast;
    const device = await registerDevice(t.api, moderator);
    expect((await t.api.post('/mobile_push/register', moderator, registration(device))).status).toBe(200);
    await t.ctx.push!.whenIdle();
    expect(await t.ctx.db('client_devices').where({ id: device }).first('push_key')).toEqual({ push_key: expect.any(String) });
    await doRegenerateApiKey(t.ctx.db, moderator);
    const row = await t.ctx.db('client_devices').where({ id: device }).first('push_key', 'relay_device_id', 'token_id');
    expect(row).toEqual({ push_key: null, relay_device_id: null, token_id: null });
  });
});
