import { eachDatabase } from './support/databases';
import type { TestServer } from './support/server';
import { startTestServer } from './support/server';

eachDatabase('legacy push tokens (APNs and FCM)', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  const TOKEN = 'c0ffee00'.repeat(8);
  const APP = 'org.example.parley';
  const tokensOf = (userId: number) =>
    t.ctx.db('push_tokens').where({ user_id: userId }).orderBy('id').select('kind', 'token', 'ios_app_id');
  const countAll = async () => Number(((await t.ctx.db('push_tokens').count('* as n')) as Array<{ n: number }>)[0]!.n);
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });

  describe('POST /users/me/apns_device_token', () => {
    it('stores the token as sent, with its app ID, without any push service configured', async () => {
      const res = await t.api.post('/users/me/apns_device_token', t.cast.member, { token: TOKEN, appid: APP });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await tokensOf(t.cast.member.id)).toEqual([{ kind: 'apns', token: TOKEN, ios_app_id: APP }]);
    });

    it('registering the same token again changes nothing', async () => {
      const res = await t.api.post('/users/me/apns_device_token', t.cast.member, { token: TOKEN, appid: 'org.example.other' });
      expect(res.status).toBe(200);
      expect(await tokensOf(t.cast.member.id)).toEqual([{ kind: 'apns', token: TOKEN, ios_app_id: APP }]);
    });

    it('lets two users register the same device token', async () => {
      await t.api.post('/users/me/apns_device_token', t.cast.admin, { token: TOKEN, appid: APP });
      expect(await tokensOf(t.cast.admin.id)).toEqual([{ kind: 'apns', token: TOKEN, ios_app_id: APP }]);
      expect(await tokensOf(t.cast.member.id)).toHaveLength(1);
    });

    it('takes hex with whitespace between byte pairs and a token of 4,096 characters', async () => {
      const spaced = 'ab cd\tef\n01';
      const long = 'ab'.repeat(2048);
      for (const token of [spaced, long]) {
        const res = await t.api.post('/users/me/apns_device_token', t.cast.moderator, { token, appid: APP });
        expect(res.status).toBe(200);
      }
      expect((await tokensOf(t.cast.moderator.id)).map((r: { token: string }) => r.token)).toEqual([spaced, long]);
    });

    it.each([
      ['an empty token', { token: '', appid: APP }, 'Empty or invalid length token'],
      ['a token of 4,097 characters', { token: 'a'.repeat(4097), appid: APP }, 'Empty or invalid length token'],
      ['an odd number of hex digits', { token: 'abc', appid: APP }, 'Invalid APNS token'],
      ['a token that is not hex', { token: 'zz'.repeat(32), appid: APP }, 'Invalid APNS token'],
      // Zulip before its E2EE push era read APNs tokens as lenient Base64 and took this one; its server since reads hex.
      ['a token of the old Base64 examples', { token: 'apple-tokenbb', appid: APP }, 'Invalid APNS token'],
      ['whitespace inside a byte pair', { token: 'a b', appid: APP }, 'Invalid APNS token'],
      ['an app ID with a space', { token: TOKEN, appid: 'org.example parley' }, 'appid has invalid format'],
      ['an empty app ID', { token: TOKEN, appid: '' }, 'appid has invalid format'],
      ['an app ID with a slash', { token: TOKEN, appid: 'org/example' }, 'appid has invalid format'],
    ])('refuses %s, storing nothing', async (_name, fields, msg) => {
      const before = await countAll();
      const res = await t.api.post('/users/me/apns_device_token', t.cast.guest, fields);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await countAll()).toBe(before);
    });

    it('needs appid (since feature level 223)', async () => {
      const res = await t.api.post('/users/me/apns_device_token', t.cast.guest, { token: TOKEN });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: "Missing 'appid' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'appid' });
      expect(await tokensOf(t.cast.guest.id)).toEqual([]);
    });

    it('refuses bots', async () => {
      const res = await t.api.post('/users/me/apns_device_token', t.cast.bot, { token: TOKEN, appid: APP });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('This endpoint does not accept bot requests.'));
      expect(await tokensOf(t.cast.bot.id)).toEqual([]);
    });
  });

  describe('DELETE /users/me/apns_device_token', () => {
    it("removes the caller's token only", async () => {
      const token = 'dead'.repeat(16);
      await t.api.post('/users/me/apns_device_token', t.cast.owner, { token, appid: APP });
      await t.api.post('/users/me/apns_device_token', t.cast.admin, { token, appid: APP });
      const res = await t.api.delete('/users/me/apns_device_token', t.cast.owner, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await tokensOf(t.cast.owner.id)).toEqual([]);
      expect((await tokensOf(t.cast.admin.id)).map((r: { token: string }) => r.token)).toContain(token);
    });

    it("answers another user's token as an unknown one, and keeps it", async () => {
      const before = await tokensOf(t.cast.member.id);
      expect(before).toHaveLength(1);
      const res = await t.api.delete('/users/me/apns_device_token', t.cast.guest, { token: TOKEN });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('Token does not exist'));
      expect(await tokensOf(t.cast.member.id)).toEqual(before);
    });

    it('a long token round-trips', async () => {
      const long = 'ef'.repeat(2048);
      await t.api.post('/users/me/apns_device_token', t.cast.guest, { token: long, appid: APP });
      const res = await t.api.delete('/users/me/apns_device_token', t.cast.guest, { token: long });
      expect(res.status).toBe(200);
      expect(await tokensOf(t.cast.guest.id)).toEqual([]);
    });

    it.each([
      ['an empty token', '', 'Empty or invalid length token'],
      ['a token that is not hex', 'not-hex', 'Invalid APNS token'],
    ])('refuses %s, removing nothing', async (_name, token, msg) => {
      const before = await countAll();
      const res = await t.api.delete('/users/me/apns_device_token', t.cast.member, { token });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await countAll()).toBe(before);
    });

    it('refuses bots', async () => {
      const res = await t.api.delete('/users/me/apns_device_token', t.cast.bot, { token: TOKEN });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('This endpoint does not accept bot requests.'));
    });
  });
  describe('POST and DELETE /users/me/android_gcm_reg_id (FCM)', () => {
    const FCM = 'dGhpcyBpcyBhbiBGQ00gdG9rZW4:APA91b-example_token';

    it('stores any text as sent, once, without any push service configured; removes the caller’s only', async () => {
      for (const who of [t.cast.member, t.cast.member, t.cast.admin]) {
        const res = await t.api.post('/users/me/android_gcm_reg_id', who, { token: FCM });
        expect([res.status, res.body]).toEqual([200, { result: 'success', msg: '' }]);
      }
      const fcmOf = async (userId: number) => (await tokensOf(userId)).filter((r: { kind: string }) => r.kind === 'fcm');
      expect(await fcmOf(t.cast.member.id)).toEqual([{ kind: 'fcm', token: FCM, ios_app_id: null }]);
      // The same text as an APNs token is another registration.
      expect((await tokensOf(t.cast.member.id)).map((r: { kind: string }) => r.kind).sort()).toEqual(['apns', 'fcm']);
      const gone = await t.api.delete('/users/me/android_gcm_reg_id', t.cast.member, { token: FCM });
      expect([gone.status, gone.body]).toEqual([200, { result: 'success', msg: '' }]);
      expect(await fcmOf(t.cast.member.id)).toEqual([]);
      expect(await fcmOf(t.cast.admin.id)).toHaveLength(1);
      const again = await t.api.delete('/users/me/android_gcm_reg_id', t.cast.member, { token: FCM });
      expect([again.status, again.body]).toEqual([400, refusal('Token does not exist')]);
    });

    it('takes a token of 4,096 characters and refuses an empty or longer one, storing nothing', async () => {
      expect((await t.api.post('/users/me/android_gcm_reg_id', t.cast.moderator, { token: 'x'.repeat(4096) })).status).toBe(200);
      for (const token of ['', 'x'.repeat(4097)]) {
        const before = await countAll();
        for (const res of [
          await t.api.post('/users/me/android_gcm_reg_id', t.cast.moderator, { token }),
          await t.api.delete('/users/me/android_gcm_reg_id', t.cast.moderator, { token }),
        ]) {
          expect([res.status, res.body]).toEqual([400, refusal('Empty or invalid length token')]);
        }
        expect(await countAll()).toBe(before);
      }
    });

    it('needs token, and refuses bots', async () => {
      const missing = await t.api.post('/users/me/android_gcm_reg_id', t.cast.guest, {});
      expect(missing.body).toEqual({
        result: 'error',
        msg: "Missing 'token' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'token',
      });
      const bot = await t.api.post('/users/me/android_gcm_reg_id', t.cast.bot, { token: FCM });
      expect([bot.status, bot.body]).toEqual([400, refusal('This endpoint does not accept bot requests.')]);
      expect(await tokensOf(t.cast.bot.id)).toEqual([]);
    });
  });
});
