import type { Knex } from 'knex';
import { topicKey } from '../domain/user-topics';
import { rawRows } from './rows';

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
  // Written out rather than built: a channel send runs it, and building it costs more than running it.
  const [first] = rawRows<{ policy: unknown; muted: unknown; earlier?: unknown }>(
    await q.raw(STATE_SQL[history ?? 'none'], [
      user.userId,
      user.channelId,
      key,
      user.userId,
      user.recipientId,
      ...(history === 'channel' ? [user.recipientId, key] : history === 'own' ? [user.userId, user.recipientId, key] : []),
    ]),
  );
  return {
    policy: first?.policy == null ? 0 : Number(first.policy),
    subscribed: first?.muted != null,
    channelMuted: Boolean(Number(first?.muted ?? 0)),
    topicHasMessages: first?.earlier != null,
  };
}

const STATE_HEAD =
  'SELECT (SELECT visibility_policy FROM user_topics WHERE user_id = ? AND channel_id = ? AND topic_key = ?) AS policy, ' +
  '(SELECT is_muted FROM subscriptions WHERE user_id = ? AND recipient_id = ? AND active = 1) AS muted';
const STATE_SQL = {
  none: STATE_HEAD,
  channel: `${STATE_HEAD}, (SELECT id FROM messages WHERE recipient_id = ? AND topic_key = ? LIMIT 1) AS earlier`,
  own:
    `${STATE_HEAD}, (SELECT m.id FROM user_messages um JOIN messages m ON m.id = um.message_id ` +
    'WHERE um.user_id = ? AND m.recipient_id = ? AND m.topic_key = ? LIMIT 1) AS earlier',
} as const;

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
