import { VisibilityPolicy } from './user-topics';

/**
 * The values of automatically_follow_topics_policy and
 * automatically_unmute_topics_in_muted_streams_policy (Zulip's
 * AUTOMATICALLY_CHANGE_VISIBILITY_POLICY_*): which of a user's actions in a
 * topic raise their visibility policy for it.
 */
export const AutomaticPolicy = { ON_PARTICIPATION: 1, ON_SEND: 2, ON_INITIATION: 3, NEVER: 4 } as const;

export interface AutomaticPolicySettings {
  automatically_follow_topics_policy: number;
  automatically_unmute_topics_in_muted_streams_policy: number;
}

/** Whether neither setting can ever change a policy: then sending reads nothing for them. */
export const automaticPoliciesOff = (s: AutomaticPolicySettings) =>
  s.automatically_follow_topics_policy === AutomaticPolicy.NEVER &&
  s.automatically_unmute_topics_in_muted_streams_policy === AutomaticPolicy.NEVER;

/** The policy an action of this kind asks for: following first; unmuting only in a muted channel. */
function policyFor(s: AutomaticPolicySettings, when: number, channelMuted: boolean): number | null {
  if (s.automatically_follow_topics_policy === when) return VisibilityPolicy.FOLLOWED;
  if (channelMuted && s.automatically_unmute_topics_in_muted_streams_policy === when) return VisibilityPolicy.UNMUTED;
  return null;
}

/**
 * Participating without sending (a reaction, a poll vote): the policy to
 * set, or null. As Zulip, only a policy that raises visibility is set: a
 * followed topic is never turned into an unmuted one, and setting the
 * current policy again is no change.
 */
export function policyAfterParticipation(s: AutomaticPolicySettings, channelMuted: boolean, current: number): number | null {
  const wanted = policyFor(s, AutomaticPolicy.ON_PARTICIPATION, channelMuted);
  if (wanted === null || wanted === current || current === VisibilityPolicy.FOLLOWED) return null;
  return wanted;
}

/**
 * Sending a message to a topic: the policy to set, or null. Sending is
 * participation and sending at once, and starting the topic (the sender
 * could see no earlier message in it) is initiation too; following wins
 * over unmuting whichever setting asked for it. A topic with a policy of
 * its own was not started by this message, which saves asking
 * (`topicIsNew` is then not consulted).
 */
export function policyAfterSend(
  s: AutomaticPolicySettings,
  channelMuted: boolean,
  current: number,
  topicIsNew: () => boolean,
): number | null {
  if (current === VisibilityPolicy.FOLLOWED) return null;
  const asked = [policyFor(s, AutomaticPolicy.ON_PARTICIPATION, channelMuted), policyFor(s, AutomaticPolicy.ON_SEND, channelMuted)];
  if (asked.includes(VisibilityPolicy.FOLLOWED)) return VisibilityPolicy.FOLLOWED;
  let policy: number | null = asked.includes(VisibilityPolicy.UNMUTED) ? VisibilityPolicy.UNMUTED : null;
  if (current !== VisibilityPolicy.INHERIT) return policy === current ? null : policy;
  if (s.automatically_follow_topics_policy === AutomaticPolicy.ON_INITIATION && topicIsNew()) return VisibilityPolicy.FOLLOWED;
  if (channelMuted && s.automatically_unmute_topics_in_muted_streams_policy === AutomaticPolicy.ON_INITIATION && topicIsNew()) {
    policy = VisibilityPolicy.UNMUTED;
  }
  return policy;
}

/** Whether the settings could change a policy on a reaction or a vote (anything else reads nothing). */
export const participationMatters = (s: AutomaticPolicySettings) =>
  s.automatically_follow_topics_policy === AutomaticPolicy.ON_PARTICIPATION ||
  s.automatically_unmute_topics_in_muted_streams_policy === AutomaticPolicy.ON_PARTICIPATION;
