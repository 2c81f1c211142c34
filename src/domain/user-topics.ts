import { EMPTY_TOPIC_DISPLAY_NAME } from './topics';

/** Zulip's UserTopic.VisibilityPolicy; INHERIT is stored as the absence of a row. */
export const VisibilityPolicy = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;
export type VisibilityPolicyValue = (typeof VisibilityPolicy)[keyof typeof VisibilityPolicy];

/** Topics match case-insensitively, as message topics do (messages.topic_key). */
export const topicKey = (topic: string) => topic.toLowerCase();

/**
 * The topic a client names in POST /user_topics and the legacy muting
 * endpoint: kept as sent (Zulip neither trims nor truncates it there; the
 * contract caps it at 60 characters), except that the empty topic's display
 * name means "" (feature level 334).
 */
export const userTopicName = (raw: string) => (raw === EMPTY_TOPIC_DISPLAY_NAME ? '' : raw);

/**
 * Whether a channel message counts as muted for the user (Zulip's
 * is_row_muted): in a muted channel unless its topic is unmuted or
 * followed; in another channel when its topic is muted.
 */
export function isTopicMuted(channelMuted: boolean, policy: number | undefined): boolean {
  if (channelMuted) return policy !== VisibilityPolicy.UNMUTED && policy !== VisibilityPolicy.FOLLOWED;
  return policy === VisibilityPolicy.MUTED;
}
