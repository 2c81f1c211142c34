import type { Schema } from '../contract';
import type { ChannelGroupSetting, GroupSettingValue } from '../domain/group-settings';
import type { ChannelRow, SubscriptionRow } from '../queries/channels';
import type { ChannelFolderRow } from '../queries/register';

export type { GroupSettingValue };

/** Resolves group ids for serializing settings (fetched once per request: src/events/register/groups.ts). */
export interface GroupLookup {
  value(groupId: number | null): GroupSettingValue;
  /** The system group's name (role:…) when the id is one. */
  systemName(groupId: number | null): string | undefined;
}

/** The subscriber list of a channel object: `subscribers`, `partial_subscribers`, or neither (src/access/subscriber-lists.ts). */
export type ChannelSubscriberFields = Pick<Schema<'BasicChannel'>, 'subscribers' | 'partial_subscribers'>;

export interface ChannelViewOptions extends ChannelSubscriberFields {
  groups: GroupLookup;
  subscriberCount: number;
  /** Average messages per week (src/queries/channel-stats.ts); null when the channel is too young. */
  weeklyTraffic?: number | null;
}

/**
 * Zulip's legacy stream_post_policy, derived from can_send_message_group
 * (deprecated at feature level 333): a system group maps to its policy,
 * anything else reads as "anyone".
 */
const POST_POLICY: Readonly<Record<string, Schema<'StreamPostPolicy'>>> = {
  'role:everyone': 1,
  'role:administrators': 2,
  'role:fullmembers': 3,
  'role:moderators': 4,
};

/**
 * The channel's permission settings on the wire. Typed as the contract's
 * fields: a setting the contract lacks, or one it has that is missing here,
 * does not compile.
 */
function toApiChannelGroupSettings(c: ChannelRow, groups: GroupLookup): Pick<Schema<'BasicChannel'>, ChannelGroupSetting> {
  return {
    can_add_subscribers_group: groups.value(c.can_add_subscribers_group),
    can_administer_channel_group: groups.value(c.can_administer_channel_group),
    can_create_topic_group: groups.value(c.can_create_topic_group),
    can_delete_any_message_group: groups.value(c.can_delete_any_message_group),
    can_delete_own_message_group: groups.value(c.can_delete_own_message_group),
    can_move_messages_out_of_channel_group: groups.value(c.can_move_messages_out_of_channel_group),
    can_move_messages_within_channel_group: groups.value(c.can_move_messages_within_channel_group),
    can_remove_subscribers_group: groups.value(c.can_remove_subscribers_group),
    can_resolve_topics_group: groups.value(c.can_resolve_topics_group),
    can_send_message_group: groups.value(c.can_send_message_group),
    can_subscribe_group: groups.value(c.can_subscribe_group),
  };
}

/** A channel without anyone's personal settings (never_subscribed, channel events). */
export function toApiBasicChannel(c: ChannelRow, o: ChannelViewOptions): Schema<'BasicChannel'> {
  const postPolicy = POST_POLICY[o.groups.systemName(c.can_send_message_group) ?? ''] ?? 1;
  return {
    stream_id: c.id,
    name: c.name,
    description: c.description,
    rendered_description: c.rendered_description,
    date_created: c.date_created,
    creator_id: c.creator_id,
    invite_only: c.invite_only,
    is_web_public: c.is_web_public,
    stream_post_policy: postPolicy,
    is_announcement_only: postPolicy === 2,
    message_retention_days: c.message_retention_days,
    history_public_to_subscribers: c.history_public_to_subscribers,
    first_message_id: c.first_message_id,
    folder_id: c.folder_id,
    topics_policy: c.topics_policy,
    is_recently_active: c.is_recently_active,
    stream_weekly_traffic: o.weeklyTraffic ?? null,
    is_archived: c.deactivated,
    subscriber_count: o.subscriberCount,
    ...toApiChannelGroupSettings(c, o.groups),
    ...(o.subscribers && { subscribers: o.subscribers }),
    ...(o.partial_subscribers && { partial_subscribers: o.partial_subscribers }),
  };
}

/** The subscription object of GET /users/me/subscriptions and /register: the channel plus the user's settings for it. */
export function toApiSubscription(c: ChannelRow, sub: SubscriptionRow, o: ChannelViewOptions): Schema<'Subscription'> {
  return {
    ...toApiBasicChannel(c, o),
    color: sub.color,
    pin_to_top: sub.pin_to_top,
    is_muted: sub.is_muted,
    in_home_view: !sub.is_muted,
    desktop_notifications: sub.desktop_notifications,
    audible_notifications: sub.audible_notifications,
    push_notifications: sub.push_notifications,
    email_notifications: sub.email_notifications,
    wildcard_mentions_notify: sub.wildcard_mentions_notify,
  };
}

/** An event as an action publishes it: the queue that delivers it numbers it (`id`). */
export type Unnumbered<E extends { id: unknown }> = Omit<E, 'id'>;

/** stream create: channels became visible to the users it goes to. */
export function toApiStreamCreateEvent(streams: Array<Schema<'BasicChannel'>>): Unnumbered<Schema<'StreamCreateEvent'>> {
  return { type: 'stream', op: 'create', streams };
}

/** subscription add: the user it goes to was subscribed to these channels. */
export function toApiSubscriptionAddEvent(subscriptions: Array<Schema<'Subscription'>>): Unnumbered<Schema<'SubscriptionAddEvent'>> {
  return { type: 'subscription', op: 'add', subscriptions };
}

/** subscription remove: the user it goes to left the channel (or was removed). */
export function toApiSubscriptionRemoveEvent(c: Pick<ChannelRow, 'id' | 'name'>): Unnumbered<Schema<'SubscriptionRemoveEvent'>> {
  return { type: 'subscription', op: 'remove', subscriptions: [{ name: c.name, stream_id: c.id }] };
}

/** subscription peer_add / peer_remove: these users joined or left these channels. */
export function toApiSubscriptionPeerEvent(
  op: Schema<'SubscriptionPeerEvent'>['op'],
  streamIds: number[],
  userIds: number[],
): Unnumbered<Schema<'SubscriptionPeerEvent'>> {
  return { type: 'subscription', op, stream_ids: streamIds, user_ids: userIds };
}

/** subscription update: one personal setting of the user's subscription changed. */
export function toApiSubscriptionUpdateEvent(
  streamId: number,
  property: string,
  value: Schema<'SubscriptionUpdateEvent'>['value'],
): Unnumbered<Schema<'SubscriptionUpdateEvent'>> {
  return { type: 'subscription', op: 'update', stream_id: streamId, property, value };
}

/** A channel folder (POST /register's channel_folders). */
export function toApiChannelFolder(f: ChannelFolderRow): Schema<'ChannelFolder'> {
  return {
    id: f.id,
    name: f.name,
    order: f.order,
    date_created: f.date_created,
    creator_id: f.creator_id,
    description: f.description,
    rendered_description: f.rendered_description,
    is_archived: f.is_archived,
  };
}
