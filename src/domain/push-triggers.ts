import { VisibilityPolicy } from './user-topics';

/**
 * Who gets a mobile or email notification for a message, as Zulip decides it
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
  emailNotifications: boolean | null;
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
 * The settings one kind of notification (push or email) reads, by role:
 * Zulip decides both with the same rules and order, each from its own
 * settings (UserMessageNotificationsData's *_push_notify and *_email_notify).
 */
interface TriggerSettings {
  /** Direct messages and personal or group mentions (enable_offline_*_notifications). */
  dmAndMentions: boolean;
  wildcardMentions: boolean;
  followedTopicWildcardMentions: boolean;
  followedTopic: boolean;
  /** The personal channel setting, which the subscription's own may override. */
  channel: boolean;
}

type Reason =
  'dm' | 'mention' | 'topic_wildcard_followed' | 'stream_wildcard_followed' | 'topic_wildcard' | 'stream_wildcard' | 'followed' | 'channel';

/**
 * The most salient reason for one receiver of one message, before the
 * question of whether they are online. `flags` are the receiver's flags on
 * the message; `channel` is null for a direct message (and for a channel
 * message to a receiver not subscribed, who can then only be mentioned);
 * `channelSetting` is the subscription's override for this kind. The order
 * is Zulip's: a direct message, a personal (or group) mention, a wildcard
 * mention in a followed topic, a wildcard mention, a followed topic, the
 * channel's notifications. Direct messages and mentions follow
 * dmAndMentions alone: they notify in muted channels and topics too.
 * Alert words notify nothing here, as in Zulip's server (their flag is
 * has_alert_word, which none of its triggers reads).
 */
function triggerReason(
  flags: readonly string[],
  isDirect: boolean,
  s: TriggerSettings,
  channel: ChannelNotificationState | null,
  channelSetting: boolean | null,
): Reason | null {
  if (isDirect) return s.dmAndMentions ? 'dm' : null;
  if (s.dmAndMentions && flags.includes('mentioned')) return 'mention';
  if (channel === null) return null;
  const followed = channel.policy === VisibilityPolicy.FOLLOWED;
  const topicWildcard = flags.includes('topic_wildcard_mentioned');
  const streamWildcard = flags.includes('stream_wildcard_mentioned');
  if (s.dmAndMentions && (topicWildcard || streamWildcard)) {
    if (followed && s.followedTopicWildcardMentions) return topicWildcard ? 'topic_wildcard_followed' : 'stream_wildcard_followed';
    if (allowsChannelNotifications(channel, channel.wildcardMentionsNotify, s.wildcardMentions)) {
      return topicWildcard ? 'topic_wildcard' : 'stream_wildcard';
    }
  }
  if (followed && s.followedTopic) return 'followed';
  if (allowsChannelNotifications(channel, channelSetting, s.channel)) return 'channel';
  return null;
}

const SHARED_TRIGGERS = {
  dm: 'private_message',
  mention: 'mentioned',
  topic_wildcard_followed: 'topic_wildcard_mentioned_in_followed_topic',
  stream_wildcard_followed: 'stream_wildcard_mentioned_in_followed_topic',
  topic_wildcard: 'topic_wildcard_mentioned',
  stream_wildcard: 'stream_wildcard_mentioned',
} as const;

/** Zulip's NotificationTriggers for email (the values ScheduledMessageNotificationEmail rows carry). */
export type EmailTrigger = (typeof SHARED_TRIGGERS)[keyof typeof SHARED_TRIGGERS] | 'followed_topic_email_notify' | 'stream_email_notify';

/** The personal settings that decide a missed-message email. */
export interface EmailSettings {
  enable_offline_email_notifications: boolean;
  enable_stream_email_notifications: boolean;
  wildcard_mentions_notify: boolean;
  enable_followed_topic_email_notifications: boolean;
  enable_followed_topic_wildcard_mentions_notify: boolean;
}

/** The trigger for one receiver of one message: triggerReason with the settings of one kind, named as that kind's triggers. */
function triggerOfKind<T extends string>(
  reason: Reason | null,
  followed: T,
  channelTrigger: T,
): T | (typeof SHARED_TRIGGERS)[keyof typeof SHARED_TRIGGERS] | null {
  if (reason === null) return null;
  if (reason === 'followed') return followed;
  if (reason === 'channel') return channelTrigger;
  return SHARED_TRIGGERS[reason];
}

/** The push trigger for one receiver of one message. */
export function pushTrigger(
  flags: readonly string[],
  isDirect: boolean,
  s: PushSettings,
  channel: ChannelNotificationState | null,
): PushTrigger | null {
  const settings: TriggerSettings = {
    dmAndMentions: s.enable_offline_push_notifications,
    wildcardMentions: s.wildcard_mentions_notify,
    followedTopicWildcardMentions: s.enable_followed_topic_wildcard_mentions_notify,
    followedTopic: s.enable_followed_topic_push_notifications,
    channel: s.enable_stream_push_notifications,
  };
  const reason = triggerReason(flags, isDirect, settings, channel, channel?.pushNotifications ?? null);
  return triggerOfKind(reason, 'followed_topic_push_notify', 'stream_push_notify');
}

/** The email trigger for one receiver of one message (the same rules with the email settings). */
export function emailTrigger(
  flags: readonly string[],
  isDirect: boolean,
  s: EmailSettings,
  channel: ChannelNotificationState | null,
): EmailTrigger | null {
  const settings: TriggerSettings = {
    dmAndMentions: s.enable_offline_email_notifications,
    wildcardMentions: s.wildcard_mentions_notify,
    followedTopicWildcardMentions: s.enable_followed_topic_wildcard_mentions_notify,
    followedTopic: s.enable_followed_topic_email_notifications,
    channel: s.enable_stream_email_notifications,
  };
  const reason = triggerReason(flags, isDirect, settings, channel, channel?.emailNotifications ?? null);
  return triggerOfKind(reason, 'followed_topic_email_notify', 'stream_email_notify');
}

/** Whether a trigger is a mention of some kind (personal, group or wildcard): the mail says "mentioned". */
export function isMentionTrigger(trigger: string): boolean {
  return (
    trigger !== 'private_message' &&
    trigger !== 'stream_email_notify' &&
    trigger !== 'followed_topic_email_notify' &&
    trigger !== 'stream_push_notify' &&
    trigger !== 'followed_topic_push_notify'
  );
}

/** Zulip's presence.js OFFLINE_THRESHOLD_SECS: a user active within it counts as present. */
export const PRESENCE_IDLE_AFTER_SECONDS = 140;

/**
 * Whether presence says the receiver is away (Zulip's presence_idle_user_ids):
 * no activity reported within PRESENCE_IDLE_AFTER_SECONDS of `now` (seconds),
 * unless the organization turned presence off, when nobody is idle by it.
 */
export function presenceIdle(lastActiveTime: number | null, presenceDisabled: boolean, now: number): boolean {
  return !presenceDisabled && (lastActiveTime === null || lastActiveTime < now - PRESENCE_IDLE_AFTER_SECONDS);
}

/**
 * A receiver's state in the message's channel, from their subscription (null
 * when not subscribed) and the topic policy that judges the message: the one
 * from before the send when the send changed it (ADR 0045), else the current.
 */
export function channelStateOf(
  sub: {
    isMuted: boolean;
    pushNotifications: boolean | null;
    emailNotifications: boolean | null;
    wildcardMentionsNotify: boolean | null;
    policy: number;
  } | null,
  policyBefore: number | undefined,
): ChannelNotificationState | null {
  return (
    sub && {
      channelMuted: sub.isMuted,
      policy: policyBefore ?? sub.policy,
      pushNotifications: sub.pushNotifications,
      emailNotifications: sub.emailNotifications,
      wildcardMentionsNotify: sub.wildcardMentionsNotify,
    }
  );
}
