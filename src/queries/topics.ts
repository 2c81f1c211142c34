import type { Knex } from 'knex';

import { listTopicSummaries } from './topic-summaries';

type Q = Knex | Knex.Transaction;

export interface TopicHistoryRow {
  topic: string;
  max_id: number;
}

/**
 * A channel's topics, newest first: per topic (case-insensitive, topic_key)
 * the newest message id, and that message's spelling of the topic. With
 * shared history, the channel's topic rows (src/queries/topic-summaries.ts);
 * with `receivedBy`, only the messages that user received count (protected
 * history), grouped from them.
 */
export async function listChannelTopics(q: Q, recipientId: number, receivedBy: number | null): Promise<TopicHistoryRow[]> {
  return receivedBy === null ? listTopicSummaries(q, recipientId) : listChannelTopicsFromMessages(q, recipientId, receivedBy);
}

/**
 * The same list grouped from the messages themselves: the grouping reads
 * only the (recipient_id, topic_key, id) index; the join then touches one
 * message row per topic. The topic rows are checked against it
 * (test/topic-summaries.test.ts).
 */
export async function listChannelTopicsFromMessages(q: Q, recipientId: number, receivedBy: number | null): Promise<TopicHistoryRow[]> {
  const newest =
    receivedBy === null
      ? // recipient_id, constant here, is grouped on too: only then does MariaDB
        // read the index loosely, one seek per topic (`Using index for
        // group-by`), instead of every entry of the channel: half the database
        // time for the busiest channel at 1m (ADR 0027).
        q('messages').where('recipient_id', recipientId).groupBy('recipient_id', 'topic_key').select('topic_key').max({ max_id: 'id' })
      : q('user_messages as um')
          .join('messages as m', 'm.id', 'um.message_id')
          .where({ 'um.user_id': receivedBy, 'm.recipient_id': recipientId })
          .groupBy('m.topic_key')
          .select('m.topic_key')
          .max({ max_id: 'm.id' });
  const rows: Array<{ topic: string; max_id: number | string }> = await q
    .from(newest.as('t'))
    .join('messages as m', 'm.id', 't.max_id')
    .orderBy('t.max_id', 'desc')
    .select('m.topic', 't.max_id');
  return rows.map((r) => ({ topic: r.topic, max_id: Number(r.max_id) }));
}
