import type { Schema } from '../contract';
import { flagsToApi } from '../domain/flags';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import type { ChannelRef, EditRow, MessageRow, ReactionRow } from '../queries/messages';
import type { UserRow } from '../queries/rows';
import type { SubmessageRow } from '../queries/submessages';
import { avatarUrl, canSeeDeliveryEmail } from './users';
import { RecipientType } from '../domain/recipients';

const toApiSubmessage = (s: SubmessageRow): Schema<'Submessage'> => ({
  msg_type: s.msg_type,
  content: s.content,
  message_id: s.message_id,
  sender_id: s.sender_id,
  id: s.id,
});

/** Everything serializing a page of messages needs, fetched once per request (never per message). */
export interface MessageLookups {
  users: Map<number, UserRow>;
  channels: Map<number, ChannelRef>;
  dmParticipants: Map<number, number[]>;
  reactions: Map<number, ReactionRow[]>;
  /** Widget submessages per message, oldest first (absent: none). */
  submessages: Map<number, SubmessageRow[]>;
  /** null when the organization hides edit history. */
  edits: Map<number, EditRow[]> | null;
  realmStringId: string;
  /** avatar_url per sender, filled while serializing (one hash and settings parse per sender, not per message). */
  senderAvatars: Map<number, string | null>;
}

export interface MessageViewOptions {
  viewer: UserRow;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allowEmptyTopicName: boolean;
}

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

export const toApiReaction = (r: Pick<ReactionRow, 'emoji_name' | 'emoji_code' | 'reaction_type' | 'user_id'>): Schema<'Reaction'> => ({
  emoji_name: r.emoji_name,
  emoji_code: r.emoji_code,
  reaction_type: r.reaction_type,
  user_id: r.user_id,
});

/** The topic as the client wants it: the empty topic shows as the display name unless the client handles "". */
export const topicForClient = (topic: string, allowEmpty: boolean) => (topic === '' && !allowEmpty ? EMPTY_TOPIC_DISPLAY_NAME : topic);

/**
 * One message object. `flags` is the viewer's bitfield, or null when the
 * viewer has no user_messages row (history they can read but did not
 * receive): Zulip marks those read and historical.
 */
export function toApiMessage(row: MessageRow, flags: number | null, lk: MessageLookups, opts: MessageViewOptions): Schema<'Message'> {
  const sender = lk.users.get(row.sender_id)!;
  const channel = row.recipient_type === RecipientType.CHANNEL ? lk.channels.get(row.recipient_id)! : null;
  const out: Schema<'Message'> = {
    id: row.id,
    sender_id: sender.id,
    sender_email: sender.email,
    sender_full_name: sender.full_name,
    sender_realm_str: lk.realmStringId,
    avatar_url: senderAvatar(sender, lk, opts),
    client: row.sending_client,
    content: opts.applyMarkdown ? (row.rendered_content ?? '') : row.content,
    content_type: opts.applyMarkdown ? 'text/html' : 'text/x-markdown',
    is_me_message: row.is_me_message,
    recipient_id: row.recipient_id,
    timestamp: row.date_sent,
    reactions: (lk.reactions.get(row.id) ?? []).map(toApiReaction),
    submessages: (lk.submessages.get(row.id) ?? []).map(toApiSubmessage),
    topic_links: [],
    flags: flags === null ? ['read', 'historical'] : flagsToApi(flags),
    type: channel ? 'stream' : 'private',
    display_recipient: channel
      ? channel.name
      : (lk.dmParticipants.get(row.recipient_id) ?? [sender.id]).map((id) => toDisplayRecipient(lk.users.get(id)!)),
    subject: channel ? topicForClient(row.topic, opts.allowEmptyTopicName) : '',
  };
  if (channel) out.stream_id = channel.id;
  if (row.last_edit_time !== null) out.last_edit_timestamp = row.last_edit_time;
  if (row.last_moved_time !== null) out.last_moved_timestamp = row.last_moved_time;
  const edits = lk.edits?.get(row.id);
  if (edits && edits.length) out.edit_history = edits.map((e) => toApiEditEntry(e, opts.allowEmptyTopicName));
  return out;
}

/** A participant of a direct message, as display_recipient lists them. */
const toDisplayRecipient = (u: UserRow): Schema<'DisplayRecipientUser'> => ({
  id: u.id,
  email: u.email,
  full_name: u.full_name,
  is_mirror_dummy: u.is_mirror_dummy,
});

function senderAvatar(sender: UserRow, lk: MessageLookups, opts: MessageViewOptions): string | null {
  let url = lk.senderAvatars.get(sender.id);
  if (url === undefined) {
    url = avatarUrl(sender, opts.clientGravatar && canSeeDeliveryEmail(sender, opts.viewer));
    lk.senderAvatars.set(sender.id, url);
  }
  return url;
}

function toApiEditEntry(e: EditRow, allowEmpty: boolean): Schema<'EditHistoryEntry'> {
  const out: Schema<'EditHistoryEntry'> = { user_id: e.user_id, timestamp: e.timestamp };
  if (e.prev_content !== null) {
    out.prev_content = e.prev_content;
    out.prev_rendered_content = e.prev_rendered_content ?? '';
  }
  if (e.prev_topic !== null) {
    out.prev_topic = topicForClient(e.prev_topic, allowEmpty);
    out.topic = topicForClient(e.topic ?? '', allowEmpty);
  }
  if (e.prev_stream !== null) {
    out.prev_stream = e.prev_stream;
    // Written together with prev_stream (a move between channels).
    if (e.stream !== null) out.stream = e.stream;
  }
  return out;
}
