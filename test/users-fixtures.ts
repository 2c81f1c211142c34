/* Helpers shared by the users, user-groups and realm-defaults suites. */
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx, doDeactivateUser } from '../src/actions/users';
import type { Delivery } from '../src/events/bus';
import { inTransaction } from '../src/db/transaction';
import { Role } from '../src/domain/roles';
import type { UserRow } from '../src/queries/rows';
import { getUserById } from '../src/queries/users';
import type { ApiResponse, CastName, TestServer } from './support/server';

export const CAST_NAMES: CastName[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot', 'deactivated'];

let serial = 0;

/** A new account of the test realm (unique email), optionally deactivated at once. */
export async function freshUser(
  t: TestServer,
  opts: { role?: number; isBot?: boolean; botOwnerId?: number; deactivated?: boolean; name?: string } = {},
): Promise<UserRow> {
  const n = ++serial;
  const user = await inTransaction(t.ctx.db, (tx) =>
    createUserInTx(tx, null, {
      realmId: t.realmId,
      email: `fresh${n}-${Date.now().toString(36)}@example.com`,
      fullName: opts.name ?? `Fresh Person ${n}`,
      role: opts.role ?? Role.MEMBER,
      isBot: opts.isBot,
      botType: opts.isBot ? 1 : null,
      botOwnerId: opts.botOwnerId ?? null,
    }),
  );
  if (opts.deactivated) await doDeactivateUser(t.ctx, user.id);
  return (await getUserById(t.ctx.db, user.id))!;
}

/** Everything the users endpoints may write, to assert that a refused request changed nothing. */
export async function snapshot(t: TestServer): Promise<string> {
  const db = t.ctx.db;
  const [users, members, values, defaults, subs] = await Promise.all([
    db('users').orderBy('id').select('id', 'email', 'delivery_email', 'email_key', 'full_name', 'role', 'is_active', 'api_key', 'settings'),
    db('group_members').orderBy(['group_id', 'user_id']).select('group_id', 'user_id'),
    db('custom_profile_values').orderBy(['user_id', 'field_id']).select('user_id', 'field_id', 'value', 'rendered_value'),
    db('realm_user_defaults').orderBy('realm_id').select('realm_id', 'settings'),
    db('subscriptions').orderBy('id').select('id', 'active', 'is_user_active'),
  ]);
  return JSON.stringify({ users, members, values, defaults, subs });
}

/** The deliveries the bus saw while `work` ran. */
export async function captureEvents<T>(t: TestServer, work: () => Promise<T>): Promise<{ result: T; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const off = t.ctx.bus.subscribe((d) => deliveries.push(d));
  try {
    return { result: await work(), deliveries };
  } finally {
    off();
  }
}

/** A custom profile field of the test realm (there is no API to create one yet). */
export async function createProfileField(t: TestServer, name: string, fieldType: number, fieldData: unknown = ''): Promise<number> {
  const [id] = await t.ctx.db('custom_profile_fields').insert({
    realm_id: t.realmId,
    name,
    field_type: fieldType,
    field_data: typeof fieldData === 'string' ? fieldData : JSON.stringify(fieldData),
  });
  return Number(id);
}

/** Names of the system groups a user is a direct member of. */
export async function systemGroupsOf(t: TestServer, userId: number): Promise<string[]> {
  const names: string[] = await t.ctx
    .db('group_members as gm')
    .join('user_groups as g', 'g.id', 'gm.group_id')
    .where({ 'gm.user_id': userId, 'g.is_system_group': true })
    .pluck('g.name');
  return names.sort();
}

export async function systemGroupId(t: TestServer, name: string): Promise<number> {
  return Number((await t.ctx.db('user_groups').where({ realm_id: t.realmId, name }).first('id'))!.id);
}

/** A refused request: exactly this Zulip error, nothing written, nothing published. */
export async function expectRefusal(t: TestServer, request: () => Promise<ApiResponse>, msg: string, code = 'BAD_REQUEST'): Promise<void> {
  const before = await snapshot(t);
  const { result: res, deliveries } = await captureEvents(t, request);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ result: 'error', msg, code });
  expect(await snapshot(t)).toBe(before);
  expect(deliveries).toEqual([]);
}

/** A user of another organization (a new one, named by `stringId`). */
export async function userOfAnotherRealm(t: TestServer, stringId: string): Promise<UserRow> {
  const realmId = await doCreateRealm(t.ctx.db, { stringId, name: 'Elsewhere' });
  return inTransaction(t.ctx.db, (tx) =>
    createUserInTx(tx, null, { realmId, email: `${stringId}@example.com`, fullName: 'Some Stranger' }),
  );
}

/** One valid, non-default value for every setting of the spec's table (and default_language). */
export const NEW_SETTING_VALUES: Record<string, unknown> = {
  starred_message_counts: false,
  receives_typing_notifications: false,
  web_suggest_update_timezone: false,
  fluid_layout_width: true,
  high_contrast_mode: true,
  web_mark_read_on_scroll_policy: 3,
  web_channel_default_view: 4,
  web_font_size_px: 20,
  web_line_height_percent: 120,
  color_scheme: 2,
  enable_drafts_synchronization: false,
  translate_emoticons: true,
  display_emoji_reaction_users: false,
  web_home_view: 'all_messages',
  web_escape_navigates_to_home_view: false,
  left_side_userlist: true,
  emojiset: 'twitter',
  demote_inactive_streams: 3,
  user_list_style: 3,
  web_animate_image_previews: 'never',
  web_stream_unreads_count_display_policy: 3,
  hide_ai_features: true,
  web_inbox_show_channel_folders: false,
  web_left_sidebar_show_channel_folders: false,
  web_left_sidebar_unreads_count_summary: false,
  enable_stream_desktop_notifications: true,
  enable_stream_email_notifications: true,
  enable_stream_push_notifications: true,
  enable_stream_audible_notifications: true,
  notification_sound: 'ding',
  enable_desktop_notifications: false,
  enable_sounds: false,
  enable_followed_topic_desktop_notifications: false,
  enable_followed_topic_email_notifications: false,
  enable_followed_topic_push_notifications: false,
  enable_followed_topic_audible_notifications: false,
  email_notifications_batching_period_seconds: 600,
  enable_offline_email_notifications: false,
  enable_offline_push_notifications: false,
  enable_online_push_notifications: false,
  enable_digest_emails: false,
  message_content_in_email_notifications: false,
  pm_content_in_desktop_notifications: false,
  wildcard_mentions_notify: false,
  enable_followed_topic_wildcard_mentions_notify: false,
  desktop_icon_count_display: 4,
  realm_name_in_email_notifications_policy: 3,
  automatically_follow_topics_policy: 4,
  automatically_unmute_topics_in_muted_streams_policy: 4,
  automatically_follow_topics_where_mentioned: false,
  resolved_topic_notice_auto_read_policy: 'never',
  presence_enabled: false,
  enter_sends: true,
  twenty_four_hour_time: true,
  send_private_typing_notifications: false,
  send_stream_typing_notifications: false,
  send_read_receipts: false,
  email_address_visibility: 4,
  web_navigate_to_sent_message: false,
  default_language: 'de',
};
