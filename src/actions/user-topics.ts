import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { userTopicName, VisibilityPolicy } from '../domain/user-topics';
import { IncompatibleParametersError, ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { accessChannelForTopicPolicy, accessChannelToRemoveTopicPolicy, type ChannelRef } from '../access/user-topics';
import type { Viewer } from '../access/viewer';
import type { ChannelRow } from '../queries/channels';
import { nowSeconds } from '../queries/ids';
import type { UserRow } from '../queries/rows';
import { deleteUserTopic, getUserTopic, listUserTopics, upsertUserTopic } from '../queries/user-topics';
import { toApiMutedTopics } from '../serializers/user-topics';

/** POST /user_topics: sets (1–3) or removes (0) the caller's policy for a topic. */
export async function doUpdateUserTopic(
  ctx: AppContext,
  viewer: Viewer,
  p: Params<'update-user-topic'>,
): Promise<Data<'update-user-topic'>> {
  const ref = { id: p.stream_id };
  const channel =
    p.visibility_policy === VisibilityPolicy.INHERIT
      ? await accessChannelToRemoveTopicPolicy(ctx.db, viewer, ref, 'Invalid channel ID')
      : await accessChannelForTopicPolicy(ctx.db, viewer, ref);
  await setTopicPolicy(ctx, viewer.user, channel, userTopicName(p.topic), p.visibility_policy);
  return {};
}

/**
 * PATCH /users/me/subscriptions/muted_topics, the legacy form: `add` is
 * policy 1, `remove` policy 0. Zulip checks for exactly one channel
 * parameter first; with neither it names stream_id as missing, in a plain
 * BAD_REQUEST (no var_name). Since feature level 170 muting a muted topic
 * and unmuting one that is not muted succeed; "Topic is not muted" remains
 * only the answer to `remove` in a channel the organization does not have.
 */
export async function doUpdateMutedTopic(ctx: AppContext, viewer: Viewer, p: Params<'mute-topic'>): Promise<Data<'mute-topic'>> {
  if (p.stream_id === undefined && p.stream === undefined) throw new ApiError("Missing 'stream_id' argument");
  if (p.stream_id !== undefined && p.stream !== undefined) throw new IncompatibleParametersError(['stream_id', 'stream']);
  const ref: ChannelRef = p.stream_id !== undefined ? { id: p.stream_id } : { name: p.stream ?? '' };
  const channel =
    p.op === 'add'
      ? await accessChannelForTopicPolicy(ctx.db, viewer, ref)
      : await accessChannelToRemoveTopicPolicy(ctx.db, viewer, ref, 'Topic is not muted');
  await setTopicPolicy(
    ctx,
    viewer.user,
    channel,
    userTopicName(p.topic),
    p.op === 'add' ? VisibilityPolicy.MUTED : VisibilityPolicy.INHERIT,
  );
  return {};
}

/**
 * Writes the policy and tells the user's clients: the deprecated
 * muted_topics (the whole list) and user_topic, as Zulip sends both. Setting
 * the current policy or removing an absent one is no change and no event.
 */
async function setTopicPolicy(ctx: AppContext, user: UserRow, channel: ChannelRow, topic: string, policy: number): Promise<void> {
  await inTransaction(ctx.db, (tx) => setTopicPolicyInTx(tx, ctx, user.id, channel, topic, policy));
}

/**
 * setTopicPolicy inside a transaction (also used when a move carries
 * policies along); whether anything changed. `mutedTopicsEvent: false`
 * leaves out the legacy event, as Zulip does for a removal immediately
 * followed by a set that sends it.
 */
export async function setTopicPolicyInTx(
  tx: Tx,
  ctx: Pick<AppContext, 'bus'>,
  userId: number,
  channel: Pick<ChannelRow, 'id' | 'recipient_id'>,
  topic: string,
  policy: number,
  opts: { mutedTopicsEvent?: boolean; currentPolicy?: number } = {},
): Promise<boolean> {
  const current =
    opts.currentPolicy ?? (await getUserTopic(tx.trx, userId, channel.id, topic))?.visibility_policy ?? VisibilityPolicy.INHERIT;
  if (current === policy) return false;
  const lastUpdated = nowSeconds();
  if (policy === VisibilityPolicy.INHERIT) await deleteUserTopic(tx.trx, userId, channel.id, topic);
  else {
    await upsertUserTopic(tx.trx, {
      user_id: userId,
      channel_id: channel.id,
      recipient_id: channel.recipient_id,
      topic,
      visibility_policy: policy,
      last_updated: lastUpdated,
    });
  }
  const event: EventBody<Schema<'UserTopicEvent'>> = {
    type: 'user_topic',
    stream_id: channel.id,
    topic_name: topic,
    last_updated: lastUpdated,
    visibility_policy: policy as Schema<'VisibilityPolicy'>,
  };
  let legacy: EventBody<Schema<'MutedTopicsEvent'>> | null = null;
  if (opts.mutedTopicsEvent ?? true) {
    const muted = await listUserTopics(tx.trx, userId, VisibilityPolicy.MUTED);
    legacy = { type: 'muted_topics', muted_topics: toApiMutedTopics(muted) };
  }
  tx.afterCommit(() => {
    if (legacy) ctx.bus.publish({ event: legacy, userIds: [userId] });
    ctx.bus.publish({ event, userIds: [userId] });
  });
  return true;
}
