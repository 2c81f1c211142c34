import { CHANNEL_GROUP_SETTINGS } from '../domain/group-settings';
import type { ChannelRow } from '../queries/channels';
import type { SubscriptionSettings } from '../queries/register';

import type { GroupSettingValue } from '../domain/group-settings';

export type { GroupSettingValue };

/** Resolves group ids for serializing settings (fetched once per request: src/events/register/groups.ts). */
export interface GroupLookup {
  value(groupId: number | null): GroupSettingValue;
  /** The system group's name (role:…) when the id is one. */
  systemName(groupId: number | null): string | undefined;
}

export interface ChannelViewOptions {
  groups: GroupLookup;
  subscriberCount: number;
  /** Present when the client asked for subscribers (include_subscribers). */
  subscribers?: number[];
  /** Instead of `subscribers`, for a large channel with include_subscribers=partial (src/access/subscriber-lists.ts). */
  partialSubscribers?: number[];
  /** Average messages per week (src/queries/channel-stats.ts); null when the channel is too young. */
  weeklyTraffic?: number | null;
}

/**
 * Zulip's legacy stream_post_policy, derived from can_send_message_group
 * (deprecated at feature level 333): a system group maps to its policy,
 * anything else reads as "anyone".
 */
const POST_POLICY: Record<string, number> = {
  'role:everyone': 1,
  'role:administrators': 2,
  'role:fullmembers': 3,
  'role:moderators': 4,
};

/** A channel without anyone's personal settings (never_subscribed, channel events). */
export function toApiBasicChannel(c: ChannelRow, o: ChannelViewOptions) {
  const postPolicy = POST_POLICY[o.groups.systemName(c.can_send_message_group) ?? ''] ?? 1;
  const out: Record<string, unknown> = {
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
  };
  for (const s of CHANNEL_GROUP_SETTINGS) out[s] = o.groups.value(c[s] as number);
  if (o.subscribers) out.subscribers = o.subscribers;
  if (o.partialSubscribers) out.partial_subscribers = o.partialSubscribers;
  return out;
}

/** The subscription object of GET /users/me/subscriptions and /register: the channel plus the user's settings for it. */
export function toApiSubscription(c: ChannelRow, sub: SubscriptionSettings, o: ChannelViewOptions) {
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
