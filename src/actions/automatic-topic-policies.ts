import type { Knex } from 'knex';
import type { AppContext } from '../context';
import type { Tx } from '../db/transaction';
import { automaticPoliciesOff, participationMatters, policyAfterParticipation, policyAfterSend } from '../domain/automatic-topic-policies';
import { parseSettings } from '../domain/user-settings';
import { VisibilityPolicy } from '../domain/user-topics';
import type { ChannelRow } from '../queries/channels';
import { getTopicStateForUser, listMentionedUsersTopicState, type TopicStateForUser } from '../queries/automatic-topic-policies';
import type { UserRow } from '../queries/rows';
import { setTopicPolicyInTx } from './user-topics';

/**
 * Zulip's automatic topic policies: what a user's own actions in a topic do
 * to their visibility policy for it (automatically_follow_topics_policy,
 * automatically_unmute_topics_in_muted_streams_policy), and what being
 * mentioned does (automatically_follow_topics_where_mentioned). Each change
 * is an ordinary policy change: the user_topic event (and the legacy
 * muted_topics one), sent before the message event that caused it.
 */

type ChannelRef = Pick<ChannelRow, 'id' | 'recipient_id'>;

/**
 * What deciding the sender's automatic policy reads (one statement), or null
 * when nothing can change: a bot (Zulip's set_visibility_policy_possible), or
 * both settings "never". `canReadHistory` picks what "the topic is new"
 * means for the sender (src/queries/automatic-topic-policies.ts). POST
 * /messages reads it before its transaction, which then holds its
 * connection one round trip less.
 */
export async function readSenderTopicState(
  q: Knex | Knex.Transaction,
  sender: UserRow,
  channel: ChannelRef,
  topic: string,
  canReadHistory: boolean,
): Promise<TopicStateForUser | null> {
  if (sender.is_bot || automaticPoliciesOff(parseSettings(sender.settings))) return null;
  return getTopicStateForUser(
    q,
    { userId: sender.id, channelId: channel.id, recipientId: channel.recipient_id, topic },
    canReadHistory ? 'channel' : 'own',
  );
}

/**
 * Before a channel message is stored: the policy sending it gives the
 * sender, or null, from the state read before (`state`: null when nothing
 * can change; undefined reads it now, in the transaction).
 */
export async function decideSenderPolicy(
  tx: Tx,
  sender: UserRow,
  channel: ChannelRef,
  topic: string,
  canReadHistory: boolean,
  state?: TopicStateForUser | null,
): Promise<{ policy: number; current: number } | null> {
  const read = state === undefined ? await readSenderTopicState(tx.trx, sender, channel, topic, canReadHistory) : state;
  if (read === null) return null;
  const policy = policyAfterSend(parseSettings(sender.settings), read.channelMuted, read.policy, () => !read.topicHasMessages);
  return policy === null ? null : { policy, current: read.policy };
}

/**
 * After the message is stored: sets the sender's new policy (decided before
 * the insert), and follows the topic for the human receivers the message
 * mentions personally who asked for that, unless they muted the topic or
 * already follow it (group and wildcard mentions do not count, as in Zulip).
 * Returns each changed user's policy from before, by user: whether this very
 * message notifies them is decided on those (Zulip reads its receivers'
 * policies before the send changes any).
 */
export async function applyPoliciesOnSend(
  tx: Tx,
  ctx: Pick<AppContext, 'bus'>,
  senderId: number,
  senderPolicy: { policy: number; current: number } | null,
  channel: ChannelRef,
  topic: string,
  mentionedUserIds: ReadonlySet<number>,
  receivers: readonly number[],
): Promise<Map<number, number>> {
  const before = new Map<number, number>();
  if (senderPolicy) {
    await setTopicPolicyInTx(tx, ctx, senderId, channel, topic, senderPolicy.policy, { currentPolicy: senderPolicy.current });
    before.set(senderId, senderPolicy.current);
  }
  if (mentionedUserIds.size === 0) return before;
  const receiving = new Set(receivers);
  const candidates = [...mentionedUserIds].filter((id) => receiving.has(id));
  for (const u of await listMentionedUsersTopicState(tx.trx, candidates, channel.id, topic)) {
    if (u.policy === VisibilityPolicy.MUTED || u.policy === VisibilityPolicy.FOLLOWED) continue;
    if (!parseSettings(u.settings).automatically_follow_topics_where_mentioned) continue;
    await setTopicPolicyInTx(tx, ctx, u.id, channel, topic, VisibilityPolicy.FOLLOWED, { currentPolicy: u.policy ?? 0 });
    before.set(u.id, u.policy ?? VisibilityPolicy.INHERIT);
  }
  return before;
}

/**
 * A reaction or a widget update (a vote) in a channel topic: participation,
 * for the settings that act on it. As in Zulip, only a subscriber's policy
 * changes, and only upwards.
 */
export async function applyParticipationPolicyInTx(
  tx: Tx,
  ctx: Pick<AppContext, 'bus'>,
  user: UserRow,
  channel: ChannelRef,
  topic: string,
): Promise<void> {
  if (user.is_bot) return;
  const settings = parseSettings(user.settings);
  if (!participationMatters(settings)) return;
  const state = await getTopicStateForUser(tx.trx, { userId: user.id, channelId: channel.id, recipientId: channel.recipient_id, topic });
  if (!state.subscribed) return;
  const policy = policyAfterParticipation(settings, state.channelMuted, state.policy);
  if (policy !== null) await setTopicPolicyInTx(tx, ctx, user.id, channel, topic, policy, { currentPolicy: state.policy });
}
