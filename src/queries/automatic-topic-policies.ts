import type { Knex } from 'knex';
import { topicKey } from '../domain/user-topics';

type Q = Knex | Knex.Transaction;

/** What the automatic follow and unmute settings decide from, for one user and topic. */
export interface TopicStateForUser {
  /** The user's policy for the topic (0 when none). */
  policy: number;
  /** Whether the user is subscribed to the channel; false for a non-subscriber. */
  subscribed: boolean;
  /** Whether the user muted the channel. */
  channelMuted: boolean;
  /** Whether the topic already holds a message the user can see (asked only when `history` is given). */
  topicHasMessages: boolean;
}

/**
 * The user's policy for the topic, their subscription's muting and,
 * optionally, whether the topic already holds a message they can see —
 * every message of it when they can read the channel's history, else the
 * ones they received (so a topic started before they joined a private
 * channel with protected history still counts as theirs to start, as in
 * Zulip). One statement of scalar subqueries.
 */
export async function getTopicStateForUser(
  q: Q,
  user: { userId: number; channelId: number; recipientId: number; topic: string },
  history?: 'channel' | 'own',
): Promise<TopicStateForUser> {
  const key = topicKey(user.topic);
  const policy = q('user_topics')
    .where({ user_id: user.userId, channel_id: user.channelId, topic_key: key })
    .select('visibility_policy')
    .as('policy');
  const muted = q('subscriptions')
    .where({ user_id: user.userId, recipient_id: user.recipientId, active: true })
    .select('is_muted')
    .as('muted');
  const columns: Knex.QueryBuilder[] = [policy, muted];
  if (history === 'channel') {
    columns.push(q('messages').where({ recipient_id: user.recipientId, topic_key: key }).select('id').limit(1).as('earlier'));
  } else if (history === 'own') {
    columns.push(
      q('user_messages as um')
        .join('messages as m', 'm.id', 'um.message_id')
        .where({ 'um.user_id': user.userId, 'm.recipient_id': user.recipientId, 'm.topic_key': key })
        .select('m.id')
        .limit(1)
        .as('earlier'),
    );
  }
  const row = (await q.select(...columns).first()) as { policy: unknown; muted: unknown; earlier?: unknown } | undefined;
  return {
    policy: row?.policy == null ? 0 : Number(row.policy),
    subscribed: row?.muted != null,
    channelMuted: Boolean(Number(row?.muted ?? 0)),
    topicHasMessages: row?.earlier != null,
  };
}

/** A mentioned user whom the setting automatically_follow_topics_where_mentioned may concern. */
export interface MentionedUserTopicRow {
  id: number;
  settings: string;
  /** Their policy for the topic, null when none. */
  policy: number | null;
}

/** Active human users among `userIds` with their settings and their policy for the topic. One statement. */
export async function listMentionedUsersTopicState(
  q: Q,
  userIds: readonly number[],
  channelId: number,
  topic: string,
): Promise<MentionedUserTopicRow[]> {
  if (userIds.length === 0) return [];
  const rows = (await q('users as u')
    .leftJoin('user_topics as ut', (j) =>
      j
        .on('ut.user_id', '=', 'u.id')
        .andOn('ut.channel_id', '=', q.raw('?', [channelId]))
        .andOn('ut.topic_key', '=', q.raw('?', [topicKey(topic)])),
    )
    .whereIn('u.id', userIds)
    .where({ 'u.is_active': true, 'u.is_bot': false })
    .select('u.id', 'u.settings', 'ut.visibility_policy')) as Array<{ id: unknown; settings: unknown; visibility_policy: unknown }>;
  return rows.map((r) => ({
    id: Number(r.id),
    settings: String(r.settings ?? ''),
    policy: r.visibility_policy == null ? null : Number(r.visibility_policy),
  }));
}
