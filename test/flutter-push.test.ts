import { eachDatabase } from './support/databases';
import { pending, register as registerQueue } from './support/events';
import { decryptWithPushKey, pushKeyOf, TestRelay, tokenIdOf } from './support/push-relay';
import { startTestServer, type TestServer } from './support/server';

/**
 * The current Flutter app's push set-up and tear-down at the feature level
 * Parley advertises, replayed request by request as the app sends them
 * (zulip-flutter lib/model/push_device.dart and lib/api/route/*.dart): form
 * fields, integers JSON-encoded, everything else raw. At level 468 and above
 * the app registers its device before anything else, then registers the
 * device for encrypted push (key and token together), follows the outcome in
 * `devices` and device events, and at logout (level 470 and above) removes
 * the device. A direct message must reach the relay encrypted under the
 * app's key, in the payload form the app parses, and nothing more once the
 * device is gone.
 */
eachDatabase('the Flutter app’s push registration, end to end', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 10, pushRelayMaxAttempts: 3 } });
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
    await relay.close();
  });

  /**
   * What the app's notification parser (lib/api/notifications.dart,
   * NotifPayloadNewMessage) requires of a decrypted message payload; it
   * throws where the app's parser would.
   */
  function parseAsTheApp(p: Record<string, any>) {
    const int = (v: unknown, name: string) => {
      if (!Number.isInteger(v)) throw new Error(`${name} is not an integer: ${JSON.stringify(v)}`);
      return v as number;
    };
    if ((p.type ?? p.event) !== 'message') throw new Error('not a message payload');
    const realmUrl = new URL(String(p.realm_url ?? p.realm_uri));
    const senderAvatarUrl = new URL(String(p.sender_avatar_url));
    const common = {
      realmUrl: realmUrl.href,
      userId: int(p.user_id, 'user_id'),
      senderId: int(p.sender_id, 'sender_id'),
      senderAvatarUrl: senderAvatarUrl.href,
      senderFullName: String(p.sender_full_name),
      messageId: int(p.message_id, 'message_id'),
      time: int(p.time, 'time'),
      content: String(p.content),
    };
    if ('channel_id' in p || 'stream_id' in p) return { ...common, channelId: int(p.channel_id, 'channel_id'), topic: String(p.topic) };
    // An encrypted payload names a direct message's people in recipient_user_ids (a list of integers);
    // the app's fallbacks are the legacy plaintext forms, whose ids are strings.
    if (Array.isArray(p.recipient_user_ids))
      return { ...common, allRecipientIds: p.recipient_user_ids.map((id: unknown) => int(id, 'id')) };
    if (typeof p.pm_users === 'string') return { ...common, allRecipientIds: p.pm_users.split(',').map(Number) };
    if (typeof p.sender_id === 'string' && typeof p.user_id === 'string') return { ...common, allRecipientIds: [Number(p.sender_id)] };
    throw new Error('bad recipient');
  }

  it('register → register the device → register it for push → a DM arrives encrypted → remove the device → nothing more', async () => {
    const { member: phoneUser, owner } = t.cast;
    // 1. The app's POST /register: it gates its push code on the level.
    const queue = await registerQueue(t, phoneUser, { apply_markdown: true, client_gravatar: true, slim_presence: true });
    expect(queue.state.zulip_feature_level).toBeGreaterThanOrEqual(470);
    expect(queue.state.devices).toEqual({});

    // 2. Level 468 and above: a device id before anything about push.
    const device = await t.api.post('/register_client_device', phoneUser, {});
    expect(device.status).toBe(200);
    const deviceId = device.body.device_id;
    expect(Number.isInteger(deviceId)).toBe(true);

    // 3. No entry for it in `devices` yet: the key and the token go together.
    const token = 'fcm-token-issued-to-this-phone';
    const pushKey = pushKeyOf(42);
    const push = await t.api.post('/mobile_push/register', phoneUser, {
      device_id: deviceId,
      push_key_id: 1234567,
      push_key: pushKey,
      token_kind: 'fcm',
      token_id: tokenIdOf(token),
      bouncer_public_key: Buffer.from('the relay public key').toString('base64'),
      encrypted_push_registration: Buffer.from(JSON.stringify({ token, token_kind: 'fcm', timestamp: 1 })).toString('base64'),
    });
    expect([push.status, push.body]).toEqual([200, { result: 'success', msg: '' }]);
    await t.ctx.push!.whenIdle();

    // 4. The app learns the outcome from its event queue: pending, then registered.
    const updates = (await pending(t, queue)).filter((e) => e.type === 'device');
    expect(updates.map((e) => e.op)).toEqual(['add', 'update', 'update']);
    expect(updates[2]).toMatchObject({ device_id: deviceId, push_token_id: tokenIdOf(token), pending_push_token_id: null });
    // What its next start reads: nothing left to send (the comparison the app makes).
    const again = await registerQueue(t, phoneUser, { fetch_event_types: ['device'] });
    const entry = again.state.devices[String(deviceId)];
    expect(entry).toMatchObject({ push_key_id: 1234567, push_registration_error_code: null });
    expect(entry.pending_push_token_id ?? entry.push_token_id).toBe(tokenIdOf(token));

    // 5. A direct message: one encrypted notification the app's key opens and its parser reads.
    const before = relay.delivered().length;
    const sent = await t.api.post('/messages', owner, {
      type: 'direct',
      to: JSON.stringify([phoneUser.id]),
      content: 'Are you **there**?',
    });
    expect(sent.status).toBe(200);
    await t.ctx.push!.whenIdle();
    const delivered = relay.delivered().slice(before);
    expect(delivered).toHaveLength(1);
    const [request] = delivered[0]!.body.push_requests as Array<{ push_key_id: number; encrypted_data: string }>;
    expect(request!.push_key_id).toBe(1234567);
    const payload = decryptWithPushKey(request!.encrypted_data, pushKey)!;
    expect(parseAsTheApp(payload)).toEqual({
      realmUrl: new URL(t.ctx.config.externalUrl).href,
      userId: phoneUser.id,
      senderId: owner.id,
      senderAvatarUrl: expect.stringMatching(/^https?:\/\//),
      senderFullName: owner.full_name,
      messageId: sent.body.id,
      time: expect.any(Number),
      content: 'Are you there?',
      allRecipientIds: [owner.id, phoneUser.id].sort((a, b) => a - b),
    });

    // 6. Logout at level 470 and above: the device goes, and with it the notifications.
    const removed = await t.api.post('/remove_client_device', phoneUser, { device_id: deviceId });
    expect(removed.status).toBe(200);
    const after = relay.delivered().length;
    expect((await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([phoneUser.id]), content: 'still?' })).status).toBe(
      200,
    );
    await t.ctx.push!.whenIdle();
    expect(relay.delivered().length).toBe(after);
    expect(relay.to(TestRelay.NOTIFY).length).toBe(relay.delivered().length);
  });

  it('the app’s legacy path below level 468: an FCM token, removed at logout', async () => {
    const { moderator } = t.cast;
    expect((await t.api.post('/users/me/android_gcm_reg_id', moderator, { token: 'legacy-fcm-token' })).status).toBe(200);
    expect(await t.ctx.db('push_tokens').where({ user_id: moderator.id }).pluck('token')).toEqual(['legacy-fcm-token']);
    expect((await t.api.delete('/users/me/android_gcm_reg_id', moderator, { token: 'legacy-fcm-token' })).status).toBe(200);
    expect(await t.ctx.db('push_tokens').where({ user_id: moderator.id }).pluck('token')).toEqual([]);
  });
});
