import { VisibilityPolicy } from './user-topics';

/**
 * Who gets a mobile notification for a message, as Zulip decides it
 * (zerver/lib/notification_data.py and the send path's recipient sets):
 * the reason ("trigger") is the most salient one that the receiver's
 * settings allow, or none.
 */

/** Zulip's NotificationTriggers for push (the values its queues carry). */
export type PushTrigger =
  | 'private_message'
  | 'mentioned'
  | 'topic_wildcard_mentioned_in_followed_topic'
  | 'stream_wildcard_mentioned_in_followed_topic'
  | 'topic_wildcard_mentioned'
  | 'stream_wildcard_mentioned'
  | 'followed_topic_push_notify'
  | 'stream_push_notify';

/** The personal settings that decide a push notification. */
export interface PushSettings {
  enable_offline_push_notifications: boolean;
  enable_online_push_notifications: boolean;
  enable_stream_push_notifications: boolean;
  wildcard_mentions_notify: boolean;
  enable_followed_topic_push_notifications: boolean;
  enable_followed_topic_wildcard_mentions_notify: boolean;
}

/** The receiver's subscription to the message's channel and their policy for its topic. */
export interface ChannelNotificationState {
  channelMuted: boolean;
  /** 0 inherit, 1 muted, 2 unmuted, 3 followed. */
  policy: number;
  /** The subscription's own settings; null inherits the personal one. */
  pushNotifications: boolean | null;
  wildcardMentionsNotify: boolean | null;
}

/**
 * Zulip's user_allows_notifications_in_StreamTopic: a muted topic, or a
 * muted channel whose topic is not unmuted (or followed), allows nothing;
 * otherwise the subscription's setting, and the personal one when it has
 * none.
 */
export function allowsChannelNotifications(s: ChannelNotificationState, channelSetting: boolean | null, personalSetting: boolean): boolean {
  if (s.channelMuted && s.policy !== VisibilityPolicy.UNMUTED && s.policy !== VisibilityPolicy.FOLLOWED) return false;
  if (s.policy === VisibilityPolicy.MUTED) return false;
  return channelSetting ?? personalSetting;
}

/**
 * The push trigger for one receiver of one message, before the question of
 * whether they are online. `flags` are the receiver's flags on the message;
 * `channel` is null for a direct message (and for a channel message to a
 * receiver not subscribed, who can then only be mentioned). The order is
 * Zulip's: a direct message, a personal (or group) mention, a wildcard
 * mention in a followed topic, a wildcard mention, a followed topic, the
 * channel's notifications. Direct messages and mentions follow
 * enable_offline_push_notifications alone: they notify in muted channels
 * and topics too.
 */
export function pushTrigger(
  flags: readonly string[],
  isDirect: boolean,
  settings: PushSettings,
  channel: ChannelNotificationState | null,
): PushTrigger | null {
  const dmAndMentions = settings.enable_offline_push_notifications;
  if (isDirect) return dmAndMentions ? 'private_message' : null;
  if (dmAndMentions && flags.includes('mentioned')) return 'mentioned';
  if (channel === null) return null;
  const followed = channel.policy === VisibilityPolicy.FOLLOWED;
  const topicWildcard = flags.includes('topic_wildcard_mentioned');
  const streamWildcard = flags.includes('stream_wildcard_mentioned');
  if (dmAndMentions && (topicWildcard || streamWildcard)) {
    if (followed && settings.enable_followed_topic_wildcard_mentions_notify) {
      return topicWildcard ? 'topic_wildcard_mentioned_in_followed_topic' : 'stream_wildcard_mentioned_in_followed_topic';
    }
    if (allowsChannelNotifications(channel, channel.wildcardMentionsNotify, settings.wildcard_mentions_notify)) {
      return topicWildcard ? 'topic_wildcard_mentioned' : 'stream_wildcard_mentioned';
    }
  }
  if (followed && settings.enable_followed_topic_push_notifications) return 'followed_topic_push_notify';
  if (allowsChannelNotifications(channel, channel.pushNotifications, settings.enable_stream_push_notifications))
    return 'stream_push_notify';
  return null;
}

/** Zulip's presence.js OFFLINE_THRESHOLD_SECS: a user active within it counts as present. */
export const PRESENCE_IDLE_AFTER_SECONDS = 140;
