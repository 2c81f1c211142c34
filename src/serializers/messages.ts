import { flagsToApi } from '../domain/flags';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import type { ChannelRef, EditRow, MessageRow, ReactionRow } from '../queries/messages';
import type { UserRow } from '../queries/rows';
import { avatarUrl, canSeeDeliveryEmail } from './users';
import { RecipientType } from '../domain/recipients';

/** Everything serializing a page of messages needs, fetched once per request (never per message). */
export interface MessageLookups {
  users: Map<number, UserRow>;
  channels: Map<number, ChannelRef>;
  dmParticipants: Map<number, number[]>;
  reactions: Map<number, ReactionRow[]>;
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

export const toApiReaction = (r: Pick<ReactionRow, 'emoji_name' | 'emoji_code' | 'reaction_type' | 'user_id'>) => ({
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
export function toApiMessage(row: MessageRow, flags: number | null, lk: MessageLookups, opts: MessageViewOptions) {
  const sender = lk.users.get(row.sender_id)!;
  const isChannel = row.recipient_type === RecipientType.CHANNEL;
  const out: Record<string, unknown> = {
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
    submessages: [],
    topic_links: [],
    flags: flags === null ? ['read', 'historical'] : flagsToApi(flags),
  };
  if (isChannel) {
    const channel = lk.channels.get(row.recipient_id)!;
    out.type = 'stream';
    out.stream_id = channel.id;
    out.display_recipient = channel.name;
    out.subject = topicForClient(row.topic, opts.allowEmptyTopicName);
  } else {
    out.type = 'private';
    out.subject = '';
    out.display_recipient = (lk.dmParticipants.get(row.recipient_id) ?? [sender.id]).map((id) => {
      const u = lk.users.get(id)!;
      return { id: u.id, email: u.email, full_name: u.full_name, is_mirror_dummy: u.is_mirror_dummy };
    });
  }
  if (row.last_edit_time !== null) out.last_edit_timestamp = row.last_edit_time;
  if (row.last_moved_time !== null) out.last_moved_timestamp = row.last_moved_time;
  const edits = lk.edits?.get(row.id);
  if (edits && edits.length) out.edit_history = edits.map((e) => toApiEditEntry(e, opts.allowEmptyTopicName));
  return out;
}

function senderAvatar(sender: UserRow, lk: MessageLookups, opts: MessageViewOptions): string | null {
  let url = lk.senderAvatars.get(sender.id);
  if (url === undefined) {
    url = avatarUrl(sender, opts.clientGravatar && canSeeDeliveryEmail(sender, opts.viewer));
    lk.senderAvatars.set(sender.id, url);
  }
  return url;
}

function toApiEditEntry(e: EditRow, allowEmpty: boolean) {
  const out: Record<string, unknown> = { user_id: e.user_id, timestamp: e.timestamp };
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
    out.stream = e.stream;
  }
  return out;
}
