import type { Knex } from 'knex';
import { listRecentDmConversations, listStarredMessageIds } from '../../queries/register';
import { toApiRecentDmConversations } from '../../serializers/messages';
import type { StatePart } from './types';

/** Zulip's limits: get_starred_message_ids sends the 10,000 oldest; recent conversations come from the 1,000 newest DMs. */
export const MAX_STARRED_MESSAGES = 10_000;
export const RECENT_DM_MESSAGES = 1_000;

/** `starred_messages`: the IDs of the user's starred messages, ascending. */
export async function starredMessagesState(db: Knex, userId: number): Promise<StatePart<'starred_messages'>> {
  return { starred_messages: await listStarredMessageIds(db, userId, MAX_STARRED_MESSAGES) };
}

/**
 * `recent_private_conversations`: the conversations of the user's 1,000
 * newest direct messages, each with its newest of them and its other
 * participants, newest conversation first (Zulip's
 * get_recent_private_conversations, sorted as its post_process_state does).
 * A conversation older than those 1,000 messages is not "recent".
 */
export async function recentDmState(db: Knex, userId: number): Promise<StatePart<'recent_private_conversations'>> {
  const rows = await listRecentDmConversations(db, userId, RECENT_DM_MESSAGES);
  return { recent_private_conversations: toApiRecentDmConversations(rows) };
}
