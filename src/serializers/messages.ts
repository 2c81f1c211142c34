import type { Schema } from '../contract';
import type { UserRow } from '../queries/rows';

export { toApiReaction, renderMessageDict, toMessageDict, topicForClient } from './message-dicts';
export type { MessageDict, DictReadContext, MessageViewOptions } from './message-dicts';

/**
 * The message event as actions publish it; each queue turns it into its
 * wire form, Schema<'MessageEvent'> (src/events/shape.ts). The message
 * carries no flags (each receiver's travel beside it, Delivery.perUser);
 * raw_content serves queues without apply_markdown, and the sender's queue
 * and local id let that queue match its local echo. `sender` is the
 * sender's row as of the send (never on the wire): what client_gravatar
 * needs, so that no poll reads it again — as Zulip, whose message dict
 * keeps the sender's avatar fields from the send.
 */
export type MessageBusEvent = {
  type: 'message';
  message: Omit<Schema<'Message'>, 'flags'>;
  raw_content: string;
  sender_queue_id: string | null;
  local_message_id: string | null;
  sender: UserRow;
  /**
   * Receivers whose policy for the topic this very message changed (the
   * automatic follow and unmute settings), with the policy they had before:
   * the push decision for the message uses those, as Zulip reads its
   * receivers' policies before the send changes any. Never sent to clients.
   */
  topic_policies_before?: Record<number, number>;
  /**
   * Receivers mentioned through a group and not personally, with the
   * smallest such group (`users`: user → group; `names`: group → name): a
   * notification the mention causes names the group. Never sent to clients.
   */
  group_mentions?: { users: Record<number, number>; names: Record<number, string> };
  /**
   * Everyone the message mentions personally or through a group, receivers
   * or not (a channel's outgoing-webhook bot need not be subscribed to be
   * called); absent when it mentions nobody. Never sent to clients.
   */
  mentioned_user_ids?: number[];
};

/**
 * recent_private_conversations from the rows of listRecentDmConversations
 * (newest conversation first, one row per other participant, none for a
 * note to self): each conversation once, its other participants ascending.
 */
export function toApiRecentDmConversations(
  rows: ReadonlyArray<{ recipient_id: number; max_message_id: number; user_id: number | null }>,
): Array<Schema<'RecentDmConversation'>> {
  const byRecipient = new Map<number, Schema<'RecentDmConversation'>>();
  for (const r of rows) {
    let c = byRecipient.get(r.recipient_id);
    if (!c) byRecipient.set(r.recipient_id, (c = { max_message_id: r.max_message_id, user_ids: [] }));
    if (r.user_id !== null) c.user_ids.push(r.user_id);
  }
  return [...byRecipient.values()];
}
