import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

/**
 * Whether the user has a message row in this channel's topic (Zulip's
 * user_message_exists_for_topic): a message they received, not one they
 * could only read as the channel's history. `topicKey` is the topic in
 * lower case, as messages.topic_key holds it.
 */
export async function userHasMessageInTopic(q: Q, userId: number, recipientId: number, topicKey: string): Promise<boolean> {
  const row = await q('messages as m')
    .join('user_messages as um', 'um.message_id', 'm.id')
    .where({ 'm.recipient_id': recipientId, 'm.topic_key': topicKey, 'um.user_id': userId })
    .first(q.raw('1 as found'));
  return row !== undefined;
}
