import type { Schema } from '../contract';
import { topicForClient } from './messages';

interface UserTopicLike {
  channel_id: number;
  channel_name: string;
  topic: string;
  visibility_policy: number;
  last_updated: number;
}

/** register's user_topics entry; the empty topic by its display name for clients without empty_topic_name. */
export const toApiUserTopic = (r: UserTopicLike, allowEmptyTopicName: boolean): Schema<'UserTopic'> => ({
  stream_id: r.channel_id,
  topic_name: topicForClient(r.topic, allowEmptyTopicName),
  last_updated: r.last_updated,
  visibility_policy: r.visibility_policy as Schema<'VisibilityPolicy'>,
});

/** The legacy muted_topics list: [channel name, topic, when]; topics as stored (the queue shapes events). */
export const toApiMutedTopics = (rows: UserTopicLike[], allowEmptyTopicName = true): Array<Schema<'MutedTopic'>> =>
  rows.map((r) => [r.channel_name, topicForClient(r.topic, allowEmptyTopicName), r.last_updated]);
