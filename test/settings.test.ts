import { parseSettings } from '../src/domain/user-settings';
import { hashPassword, verifyPassword } from '../src/domain/secrets';
import { eachDatabase } from './support/databases';
import { CAST_PASSWORD, startTestServer, TestServer } from './support/server';
import { captureEvents, expectRefusal, freshUser, NEW_SETTING_VALUES, snapshot } from './users-fixtures';

eachDatabase('PATCH /settings', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  const row = (userId: number) => t.ctx.db('users').where({ id: userId }).first();
  const settingsOf = async (userId: number) => parseSettings((await row(userId))!.settings);
  /** A new member who has a password (CAST_PASSWORD). */
  const personWithPassword = async () => {
    const user = await freshUser(t);
    await t.ctx
      .db('users')
      .where({ id: user.id })
      .update({ password_hash: await hashPassword(CAST_PASSWORD) });
    return user;
  };

  it('changes every personal setting, with one user_settings event each to the caller only', async () => {
    const user = await freshUser(t);
    const others = await settingsOf(t.cast.member.id);
    const wanted = { ...NEW_SETTING_VALUES, allow_private_data_export: true, enable_login_emails: false, enable_marketing_emails: false };
    const { result: res, deliveries } = await captureEvents(t, () => t.api.patch('/settings', user, wanted));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(await settingsOf(user.id)).toMatchObject(wanted);
    expect(await settingsOf(t.cast.member.id)).toEqual(others);
    // presence_enabled false also sends a presence event to others (tested below).
    const own = deliveries.filter((d) => d.event.type === 'user_settings');
    expect(own).toHaveLength(Object.keys(wanted).length);
    for (const d of own) expect(d.userIds).toEqual([user.id]);
    expect(deliveries.map((d) => d.event)).toContainEqual({ type: 'user_settings', op: 'update', property: 'emojiset', value: 'twitter' });
    expect(deliveries.map((d) => d.event)).toContainEqual({
      type: 'user_settings',
      op: 'update',
      property: 'default_language',
      value: 'de',
      language_name: 'Deutsch',
    });
  });

  it('announces only the settings whose value changes, and POST /register shows the new values', async () => {
    const user = await freshUser(t);
    const { deliveries } = await captureEvents(t, () =>
      t.api.patch('/settings', user, { enter_sends: false, twenty_four_hour_time: true }),
    );
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true },
    ]);
    const reg = await t.api.post('/register', user, { fetch_event_types: ['user_settings'] });
    expect(reg.body.user_settings).toMatchObject({ twenty_four_hour_time: true, enter_sends: false });
    t.ctx.queues.close();
  });

  it('changes the time zone, telling everyone who may see the user, and register reports it', async () => {
    const user = await freshUser(t);
    const { result, deliveries } = await captureEvents(t, () => t.api.patch('/settings', user, { timezone: 'Asia/Kolkata' }));
    expect(result.status).toBe(200);
    expect((await row(user.id))!.timezone).toBe('Asia/Kolkata');
    const update = deliveries.find((d) => d.event.type === 'realm_user')!;
    expect(update.event).toEqual({
      type: 'realm_user',
      op: 'update',
      person: { user_id: user.id, email: user.email, timezone: 'Asia/Kolkata' },
    });
    expect(update.userIds).toContain(t.cast.guest.id);
    expect(deliveries.map((d) => d.event)).toContainEqual({
      type: 'user_settings',
      op: 'update',
      property: 'timezone',
      value: 'Asia/Kolkata',
    });
    const reg = await t.api.post('/register', user, { fetch_event_types: ['user_settings'] });
    expect(reg.body.user_settings.timezone).toBe('Asia/Kolkata');
    t.ctx.queues.close();
  });

  it('changes the full name (trimmed) with a realm_user update; a blank or unchanged name changes nothing', async () => {
    const user = await freshUser(t);
    const { deliveries } = await captureEvents(t, () => t.api.patch('/settings', user, { full_name: '  Renamed Person ' }));
    expect((await row(user.id))!.full_name).toBe('Renamed Person');
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: user.id, full_name: 'Renamed Person' } },
    ]);
    const again = await captureEvents(t, () => t.api.patch('/settings', user, { full_name: 'Renamed Person' }));
    const blank = await captureEvents(t, () => t.api.patch('/settings', user, { full_name: '   ' }));
    expect([...again.deliveries, ...blank.deliveries]).toEqual([]);
    expect((await row(user.id))!.full_name).toBe('Renamed Person');
  });

  it('changes the password given the current one, and logging in then needs the new one', async () => {
    const user = await personWithPassword();
    const res = await t.api.patch('/settings', user, { old_password: CAST_PASSWORD, new_password: 'a-brand-new-secret' });
    expect(res.status).toBe(200);
    expect(await verifyPassword('a-brand-new-secret', (await row(user.id))!.password_hash)).toBe(true);
    const login = await t.api.post('/fetch_api_key', null, { username: user.delivery_email, password: 'a-brand-new-secret' });
    expect(login.status).toBe(200);
    const audit = await t.ctx.db('audit_log').where({ modified_user_id: user.id, event_type: 122 });
    expect(audit).toHaveLength(1);
  });

  it.each([
    ['a wrong current password', { old_password: 'not-it', new_password: 'a-brand-new-secret' }, 'Wrong password!'],
    ['no current password', { new_password: 'a-brand-new-secret' }, 'Wrong password!'],
    ['a weak new password', { old_password: CAST_PASSWORD, new_password: 'abc' }, 'New password is too weak!'],
    ['an unknown time zone', { timezone: 'Mars/Olympus_Mons' }, 'timezone is not a recognized time zone'],
    ['an empty time zone', { timezone: '' }, 'timezone is not a recognized time zone'],
    ['a name too long', { full_name: 'x'.repeat(101) }, 'Name too long!'],
    ['a name with forbidden characters', { full_name: 'Bad @name' }, 'Invalid characters in name!'],
    ['an unknown language', { default_language: 'xx' }, 'Invalid default_language'],
    ['an unknown notification sound', { notification_sound: 'bogus' }, "Invalid notification sound 'bogus'"],
    ['a batching period of zero', { email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
    [
      'a new email address',
      { email: 'elsewhere@example.com' },
      'Email address changes need a confirmation email, which this server does not send.',
    ],
  ])('refuses %s, changing nothing (even the valid settings sent with it)', async (_name, fields, msg) => {
    const user = await personWithPassword();
    const before = await snapshot(t);
    const hash = (await row(user.id))!.password_hash;
    await expectRefusal(t, () => t.api.patch('/settings', user, { ...fields, enter_sends: true }), msg);
    expect(await snapshot(t)).toBe(before);
    expect((await row(user.id))!.password_hash).toBe(hash);
  });

  it('accepts the current email address (case aside) as no change', async () => {
    const user = await freshUser(t);
    const res = await t.api.patch('/settings', user, { email: user.delivery_email.toUpperCase() });
    expect(res.status).toBe(200);
  });

  it('turning presence_enabled off tells everyone who may see the user at once', async () => {
    const user = await freshUser(t);
    const { deliveries } = await captureEvents(t, () => t.api.patch('/settings', user, { presence_enabled: false }));
    expect(deliveries.map((d) => d.event)).toContainEqual({
      type: 'user_settings',
      op: 'update',
      property: 'presence_enabled',
      value: false,
    });
    const presence = deliveries.find((d) => d.event.type === 'presence');
    expect(presence?.event).toMatchObject({ type: 'presence', user_id: user.id });
    expect(presence?.userIds).toContain(t.cast.member.id);
    const row = await t.ctx.db('user_presence').where({ user_id: user.id }).first();
    expect(row!.last_active_time).toBeNull();
  });

  it('refuses bots', async () => {
    await expectRefusal(
      t,
      () => t.api.patch('/settings', t.cast.bot, { enter_sends: true }),
      'This endpoint does not accept bot requests.',
    );
  });

  it('takes the parameters from the query string and multipart bodies, as Zulip clients send them', async () => {
    const user = await freshUser(t);
    const q = await t.api.call('patch', '/settings', user, {}, { query: { left_side_userlist: true } });
    expect(q.status).toBe(200);
    const m = await t.api.call('patch', '/settings', user, { emojiset: 'text' }, { multipart: true });
    expect(m.status).toBe(200);
    expect(await settingsOf(user.id)).toMatchObject({ left_side_userlist: true, emojiset: 'text' });
  });

  it('needs authentication', async () => {
    expect((await t.api.patch('/settings', null, { enter_sends: true })).status).toBe(401);
  });
});
