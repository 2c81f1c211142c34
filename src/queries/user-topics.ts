import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { topicKey } from '../domain/user-topics';

type Q = Knex | Knex.Transaction;

export interface UserTopicRow {
  user_id: number;
  channel_id: number;
  recipient_id: number;
  topic: string;
  visibility_policy: number;
  last_updated: number;
}

/** COLUMNS as the driver returns them. */
type Selected = Pick<TableRow<'user_topics'>, 'user_id' | 'channel_id' | 'recipient_id' | 'topic' | 'visibility_policy' | 'last_updated'>;

const toRow = (r: Selected): UserTopicRow => ({
  user_id: Number(r.user_id),
  channel_id: Number(r.channel_id),
  recipient_id: Number(r.recipient_id),
  topic: String(r.topic),
  visibility_policy: Number(r.visibility_policy),
  last_updated: Number(r.last_updated),
});

const COLUMNS = ['ut.user_id', 'ut.channel_id', 'ut.recipient_id', 'ut.topic', 'ut.visibility_policy', 'ut.last_updated'] as const;

/** The user's policy for one topic (any case), or undefined when it inherits. */
export async function getUserTopic(q: Q, userId: number, channelId: number, topic: string): Promise<UserTopicRow | undefined> {
  const row = (await q('user_topics as ut')
    .where({ 'ut.user_id': userId, 'ut.channel_id': channelId, 'ut.topic_key': topicKey(topic) })
    .first(...COLUMNS)) as Selected | undefined;
  return row ? toRow(row) : undefined;
}

/** Inserts or replaces the user's policy for the topic (the topic's case becomes the one sent): one statement on both databases. */
export async function upsertUserTopic(q: Q, row: UserTopicRow): Promise<void> {
  await q('user_topics')
    .insert({ ...row, topic_key: topicKey(row.topic) })
    .onConflict(['user_id', 'channel_id', 'topic_key'])
    .merge(['topic', 'visibility_policy', 'last_updated']);
}

/** Removes the user's policy for the topic; the number of rows removed. */
export async function deleteUserTopic(q: Q, userId: number, channelId: number, topic: string): Promise<number> {
  return q('user_topics')
    .where({ user_id: userId, channel_id: channelId, topic_key: topicKey(topic) })
    .delete();
}

export interface UserTopicWithChannel extends UserTopicRow {
  channel_name: string;
}

/** The user's policies in channels that are not archived, optionally of one policy only (Zulip's get_user_topics). */
export async function listUserTopics(q: Q, userId: number, policy?: number): Promise<UserTopicWithChannel[]> {
  const query = q('user_topics as ut')
    .join('channels as c', 'c.id', 'ut.channel_id')
    .where({ 'ut.user_id': userId, 'c.deactivated': false })
    .orderBy('ut.id')
    .select(...COLUMNS, 'c.name as channel_name');
  if (policy !== undefined) query.where('ut.visibility_policy', policy);
  const rows = (await query) as Array<Selected & { channel_name: string }>;
  return rows.map((r) => ({ ...toRow(r), channel_name: String(r.channel_name) }));
}

/** The user's policies keyed by channel recipient and lower-cased topic, for unread counts. */
export async function listUserTopicPolicies(q: Q, userId: number): Promise<Map<string, number>> {
  const rows = await q('user_topics').where({ user_id: userId }).select('recipient_id', 'topic_key', 'visibility_policy');
  return new Map(rows.map((r) => [policyKey(Number(r.recipient_id), String(r.topic_key)), Number(r.visibility_policy)]));
}

/** The key of listUserTopicPolicies' map. */
export const policyKey = (recipientId: number, key: string) => `${recipientId}\u0000${key}`;

/** Every user's policy for one topic (any case): user id → policy (Zulip's get_users_with_user_topic_visibility_policy). */
export async function listTopicPolicies(q: Q, channelId: number, topic: string): Promise<Map<number, number>> {
  const rows = await q('user_topics')
    .where({ channel_id: channelId, topic_key: topicKey(topic) })
    .select('user_id', 'visibility_policy');
  return new Map(rows.map((r) => [Number(r.user_id), Number(r.visibility_policy)]));
}
