import type { AppContext } from '../context';
import type { Tx } from '../db/transaction';
import { topicKey, VisibilityPolicy } from '../domain/user-topics';
import type { ChannelRow } from '../queries/channels';
import { listTopicPolicies } from '../queries/user-topics';
import { setTopicPolicyInTx } from './user-topics';

/**
 * When a move takes a whole topic (as far as the caller can see: Zulip's
 * moved_all_visible_messages), users' visibility policies go with it (Zulip's
 * do_update_message). A user who loses access to the messages (they moved to a
 * channel the user cannot read) loses the policy instead: no policy is left in
 * a channel one cannot access. For everyone else with a policy on either
 * topic, the original topic's policy is removed and the destination takes it;
 * when the destination already had messages, the two merge, the more visible
 * winning (followed, then unmuted, then none, then muted), so merging never
 * hides messages a user was shown. Returns the users who followed the
 * original topic (the resolve notice stays unread for them under
 * resolved_topic_notice_auto_read_policy "except_followed").
 */
export async function moveTopicPolicies(
  tx: Tx,
  ctx: AppContext,
  move: {
    origChannel: ChannelRow;
    origTopic: string;
    targetChannel: ChannelRow;
    targetTopic: string;
    /** Whether the destination topic had messages before the move. */
    targetHadMessages: boolean;
    losingAccess: readonly number[];
  },
): Promise<Set<number>> {
  const { origChannel, origTopic, targetChannel, targetTopic } = move;
  const followers = new Set<number>();
  // Renaming a topic only in case (or not at all) keeps the same rows.
  if (origChannel.id === targetChannel.id && topicKey(origTopic) === topicKey(targetTopic)) {
    for (const [userId, policy] of await listTopicPolicies(tx.trx, origChannel.id, origTopic)) {
      if (policy === VisibilityPolicy.FOLLOWED) followers.add(userId);
    }
    return followers;
  }
  const channelChanged = origChannel.id !== targetChannel.id;
  const losing = new Set(move.losingAccess);
  const [origAll, target] = await Promise.all([
    listTopicPolicies(tx.trx, origChannel.id, origTopic),
    listTopicPolicies(tx.trx, targetChannel.id, targetTopic),
  ]);
  const orig = new Map<number, number>();
  const cut: number[] = [];
  for (const [userId, policy] of origAll) {
    if (channelChanged && losing.has(userId)) cut.push(userId);
    else orig.set(userId, policy);
  }
  for (const [userId, policy] of orig) if (policy === VisibilityPolicy.FOLLOWED) followers.add(userId);

  for (const userId of cut) await setTopicPolicyInTx(tx, ctx, userId, origChannel, origTopic, VisibilityPolicy.INHERIT);

  const users = [...new Set([...orig.keys(), ...target.keys()])].sort((a, b) => a - b);
  for (const userId of users) {
    const from = orig.get(userId) ?? VisibilityPolicy.INHERIT;
    const to = target.get(userId) ?? VisibilityPolicy.INHERIT;
    if (from !== VisibilityPolicy.INHERIT) {
      // The set below sends the muted_topics list, so the removal does not.
      await setTopicPolicyInTx(tx, ctx, userId, origChannel, origTopic, VisibilityPolicy.INHERIT, { mutedTopicsEvent: false });
    }
    const result = move.targetHadMessages ? mergedPolicy(from, to) : from;
    if (result === to) continue;
    await setTopicPolicyInTx(tx, ctx, userId, targetChannel, targetTopic, result);
  }
  return followers;
}

/** Zulip's get_visibility_policy_after_merge: the more visible policy wins. */
function mergedPolicy(a: number, b: number): number {
  const both = new Set([a, b]);
  if (both.has(VisibilityPolicy.FOLLOWED)) return VisibilityPolicy.FOLLOWED;
  if (both.has(VisibilityPolicy.UNMUTED)) return VisibilityPolicy.UNMUTED;
  if (both.has(VisibilityPolicy.INHERIT)) return VisibilityPolicy.INHERIT;
  return VisibilityPolicy.MUTED;
}
