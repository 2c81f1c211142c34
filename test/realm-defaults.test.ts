import { parseSettings } from '../src/domain/user-settings';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';
import { captureEvents, expectRefusal, freshUser, NEW_SETTING_VALUES as NEW_VALUES } from './users-fixtures';

eachDatabase('PATCH /realm/user_settings_defaults', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  const defaults = async () => parseSettings((await t.ctx.db('realm_user_defaults').where({ realm_id: t.realmId }).first())!.settings);
  const settingsOf = async (userId: number) => parseSettings((await t.ctx.db('users').where({ id: userId }).first())!.settings);

  const expectRefused = (fields: Record<string, unknown>, msg: string, who = t.cast.admin, code = 'BAD_REQUEST') =>
    expectRefusal(t, () => t.api.patch('/realm/user_settings_defaults', who, fields), msg, code);

  it('changes every setting for users created later, never for existing ones, with one event each', async () => {
    const existing = await settingsOf(t.cast.member.id);
    const { result: res, deliveries } = await captureEvents(t, () =>
      t.api.patch('/realm/user_settings_defaults', t.cast.admin, NEW_VALUES),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(await defaults()).toMatchObject(NEW_VALUES);
    expect(await settingsOf(t.cast.member.id)).toEqual(existing);
    const later = await freshUser(t);
    expect(await settingsOf(later.id)).toMatchObject(NEW_VALUES);
    expect(deliveries).toHaveLength(Object.keys(NEW_VALUES).length);
    expect(deliveries.map((d) => d.event)).toContainEqual({
      type: 'realm_user_settings_defaults',
      op: 'update',
      property: 'emojiset',
      value: 'twitter',
    });
    expect(deliveries[0]!.userIds).toContain(t.cast.guest.id);
    expect(deliveries[0]!.userIds).not.toContain(t.cast.deactivated.id);
  });

  it('announces only settings whose value changes', async () => {
    await t.api.patch('/realm/user_settings_defaults', t.cast.owner, { enter_sends: true });
    const { deliveries } = await captureEvents(t, () =>
      t.api.patch('/realm/user_settings_defaults', t.cast.owner, { enter_sends: true, twenty_four_hour_time: false }),
    );
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm_user_settings_defaults', op: 'update', property: 'twenty_four_hour_time', value: false },
    ]);
  });

  it('accepts web_home_view recent_topics as recent, sent multipart', async () => {
    const res = await t.api.call(
      'patch',
      '/realm/user_settings_defaults',
      t.cast.admin,
      { web_home_view: 'recent_topics' },
      { multipart: true },
    );
    expect(res.status).toBe(200);
    expect((await defaults()).web_home_view).toBe('recent');
  });

  it('reports unknown parameters, dense_mode among them (removed at feature level 364)', async () => {
    const res = await t.api.patch('/realm/user_settings_defaults', t.cast.admin, { dense_mode: true, timezone: 'UTC' });
    expect(res.status).toBe(200);
    expect(res.body.ignored_parameters_unsupported).toEqual(['dense_mode', 'timezone']);
  });

  it.each([
    ['color_scheme', 4],
    ['web_mark_read_on_scroll_policy', 0],
    ['web_channel_default_view', 5],
    ['demote_inactive_streams', 4],
    ['user_list_style', 0],
    ['web_stream_unreads_count_display_policy', 4],
    ['desktop_icon_count_display', 5],
    ['realm_name_in_email_notifications_policy', 4],
    ['automatically_follow_topics_policy', 5],
    ['automatically_unmute_topics_in_muted_streams_policy', 0],
    ['email_address_visibility', 6],
    ['web_home_view', 'recent_conversations'],
    ['emojiset', 'apple'],
    ['web_animate_image_previews', 'sometimes'],
    ['resolved_topic_notice_auto_read_policy', 'always_except'],
  ])('refuses %s %j as Invalid', async (setting, value) => {
    await expectRefused({ [setting]: value, enter_sends: false }, `Invalid ${setting}`);
  });

  it.each([
    [{ left_side_userlist: 'yes' }, 'left_side_userlist is not valid JSON'],
    [{ left_side_userlist: '"yes"' }, 'left_side_userlist is not a boolean'],
    [{ color_scheme: '"dark"' }, 'color_scheme is not an integer'],
    [{ web_font_size_px: 0 }, 'web_font_size_px is too small'],
    [{ notification_sound: 'bogus' }, "Invalid notification sound 'bogus'"],
    [{ default_language: 'xx' }, 'Invalid default_language'],
    [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
    [{ email_notifications_batching_period_seconds: 604801 }, 'Invalid email batching period: 604801 seconds'],
    [{ enable_sounds: 1 }, 'enable_sounds is not a boolean'],
  ])('refuses %j', async (fields, msg) => {
    await expectRefused(fields, msg);
  });

  it('accepts the notification sound none', async () => {
    expect((await t.api.patch('/realm/user_settings_defaults', t.cast.admin, { notification_sound: 'none' })).status).toBe(200);
    expect((await defaults()).notification_sound).toBe('none');
  });

  it('refuses a moderator', async () => {
    await expectRefused({ enter_sends: false }, 'Must be an organization administrator', t.cast.moderator, 'UNAUTHORIZED_PRINCIPAL');
  });
});
