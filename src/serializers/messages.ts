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
};
