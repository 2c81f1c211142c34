import type { Schema } from '../contract';
import { flagsToApi } from '../domain/flags';
import { RecipientType } from '../domain/recipients';
import type { EditRow, MessageRow, ReactionRow } from '../queries/messages';
import type { RealmRow, UserRow } from '../queries/rows';
import type { SubmessageRow } from '../queries/submessages';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { avatarUrl, canSeeDeliveryEmail } from './users';

/**
 * The part of a message's wire dict that is the same for every reader and
 * every request (Zulip's cached message dict): what the per-process message
 * cache holds (src/cache/messages.ts). Left out, and filled per request:
 * - the reader's flags;
 * - everything about people (sender name, email and avatar, DM
 *   participants' names): read with the page, so a user's change shows at once;
 * - the channel's name (display_recipient): read with the page, so a rename
 *   invalidates nothing;
 * - what the client asked for (apply_markdown, client_gravatar, the empty
 *   topic's name) and what the organization shows of edit history.
 * Everything here changes only through an action on the message itself,
 * which invalidates it (`{kind: 'messages'}`).
 */
export interface MessageDict {
  id: number;
  sender_id: number;
  recipient_id: number;
  /** null for a direct message. */
  stream_id: number | null;
  topic: string;
  /** The Markdown source (apply_markdown=false, raw_content). */
  content: string;
  rendered_content: string;
  is_me_message: boolean;
  timestamp: number;
  client: string;
  last_edit_timestamp: number | null;
  last_moved_timestamp: number | null;
  reactions: Array<Schema<'Reaction'>>;
  submessages: Array<Schema<'Submessage'>>;
  /** Every edit and move, most recent first; the organization's policy filters them per request. */
  edits: EditRow[];
  /** The conversation's participants by id, ascending (direct messages only). */
  dm_participant_ids: number[] | null;
}

/** The parts of a dict read beside the message row. */
export interface MessageDictParts {
  reactions: readonly ReactionRow[];
  submessages: readonly SubmessageRow[];
  edits: readonly EditRow[];
  dmParticipantIds: number[] | null;
}

/** The topic as the client wants it: the empty topic shows as the display name unless the client handles "". */
export const topicForClient = (topic: string, allowEmpty: boolean) => (topic === '' && !allowEmpty ? EMPTY_TOPIC_DISPLAY_NAME : topic);

export const toApiReaction = (r: Pick<ReactionRow, 'emoji_name' | 'emoji_code' | 'reaction_type' | 'user_id'>): Schema<'Reaction'> => ({
  emoji_name: r.emoji_name,
  emoji_code: r.emoji_code,
  reaction_type: r.reaction_type,
  user_id: r.user_id,
});

const toApiSubmessage = (s: SubmessageRow): Schema<'Submessage'> => ({
  msg_type: s.msg_type,
  content: s.content,
  message_id: s.message_id,
  sender_id: s.sender_id,
  id: s.id,
});

/**
 * Frozen, arrays and all: a dict is shared by every request that reads the
 * message, and the text kept for it (./message-json.ts) is right only as
 * long as the dict never changes. A change to the message makes a new dict.
 */
export function toMessageDict(row: MessageRow, parts: MessageDictParts): MessageDict {
  const dict = buildMessageDict(row, parts);
  Object.freeze(dict.reactions);
  Object.freeze(dict.submessages);
  Object.freeze(dict.edits);
  if (dict.dm_participant_ids) Object.freeze(dict.dm_participant_ids);
  return Object.freeze(dict);
}

function buildMessageDict(row: MessageRow, parts: MessageDictParts): MessageDict {
  const isChannel = row.recipient_type === RecipientType.CHANNEL;
  return {
    id: row.id,
    sender_id: row.sender_id,
    recipient_id: row.recipient_id,
    stream_id: isChannel ? (row.channel_id ?? row.recipient_type_id) : null,
    topic: row.topic,
    content: row.content,
    rendered_content: row.rendered_content ?? '',
    is_me_message: row.is_me_message,
    timestamp: row.date_sent,
    client: row.sending_client,
    last_edit_timestamp: row.last_edit_time,
    last_moved_timestamp: row.last_moved_time,
    reactions: parts.reactions.map(toApiReaction),
    submessages: parts.submessages.map(toApiSubmessage),
    edits: [...parts.edits],
    dm_participant_ids: isChannel ? null : (parts.dmParticipantIds ?? [row.sender_id]),
  };
}

/** What turning dicts into wire messages needs, read once per request. */
export interface DictReadContext {
  /** Senders and DM participants. */
  users: ReadonlyMap<number, UserRow>;
  /** Channel names by recipient id. */
  channelNames: ReadonlyMap<number, string>;
  realm: Pick<RealmRow, 'string_id' | 'message_edit_history_visibility_policy'>;
  /** avatar_url per sender, filled while rendering (one hash and settings parse per sender, not per message). */
  senderAvatars: Map<number, string | null>;
  /**
   * The links the organization's current linkifiers and the raw URLs make of a topic. Computed
   * as the message is read, not stored with the dict: Zulip computes them whenever it builds a
   * message dict, from the linkifiers of that moment, so they follow linkifier changes (the
   * content's HTML does not). None (empty lists) where the caller has no linkifiers at hand.
   */
  topicLinks?: (topic: string) => Array<{ text: string; url: string }>;
}

export interface MessageViewOptions {
  viewer: UserRow;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allowEmptyTopicName: boolean;
}

/**
 * One message object from its dict. `flags` is the viewer's bitfield, or
 * null when the viewer has no user_messages row (history they can read but
 * did not receive): Zulip marks those read and historical. Made of the
 * parts below, which `encodeMessagePage` (./message-json.ts) encodes one by
 * one for pages of messages: the two are the same object by construction.
 */
export function renderMessageDict(d: MessageDict, flags: number | null, rc: DictReadContext, opts: MessageViewOptions): Schema<'Message'> {
  const sender = rc.users.get(d.sender_id)!;
  return {
    ...ownFields(d, opts.applyMarkdown),
    ...senderFields(sender, rc, opts),
    display_recipient: displayRecipient(d, rc),
    ...topicFields(d, rc, opts.allowEmptyTopicName),
    flags: flagsOf(flags),
    ...editHistoryField(d, rc, opts.allowEmptyTopicName),
  };
}

/**
 * What a message's wire object takes from its dict alone, with the content
 * in the variant asked for: the same for every reader and every request
 * until the dict is invalidated.
 */
export function ownFields(d: MessageDict, applyMarkdown: boolean) {
  const out = {
    id: d.id,
    client: d.client,
    content: applyMarkdown ? d.rendered_content : d.content,
    content_type: applyMarkdown ? ('text/html' as const) : ('text/x-markdown' as const),
    is_me_message: d.is_me_message,
    recipient_id: d.recipient_id,
    timestamp: d.timestamp,
    // Copies: the dict is shared by every request that reads the message.
    reactions: d.reactions.slice(),
    submessages: d.submessages.slice(),
    type: d.stream_id === null ? ('private' as const) : ('stream' as const),
  } satisfies Partial<Schema<'Message'>>;
  return {
    ...out,
    ...(d.stream_id !== null && { stream_id: d.stream_id }),
    ...(d.last_edit_timestamp !== null && { last_edit_timestamp: d.last_edit_timestamp }),
    ...(d.last_moved_timestamp !== null && { last_moved_timestamp: d.last_moved_timestamp }),
  };
}

/** Who sent it, as of this request (a user's change invalidates no message). */
export function senderFields(sender: UserRow, rc: DictReadContext, opts: MessageViewOptions) {
  return {
    sender_id: sender.id,
    sender_email: sender.email,
    sender_full_name: sender.full_name,
    sender_realm_str: rc.realm.string_id,
    avatar_url: senderAvatar(sender, rc, opts),
  } satisfies Partial<Schema<'Message'>>;
}

/** The channel's current name, or the direct message's participants. */
export function displayRecipient(d: MessageDict, rc: DictReadContext): Schema<'Message'>['display_recipient'] {
  if (d.stream_id !== null) return rc.channelNames.get(d.recipient_id) ?? '';
  return (d.dm_participant_ids ?? [d.sender_id]).map((id) => toDisplayRecipient(rc.users.get(id)!));
}

/** The topic as the client reads it, and the links its text makes now (none in a direct message). */
export function topicFields(d: MessageDict, rc: DictReadContext, allowEmptyTopicName: boolean) {
  const channel = d.stream_id !== null;
  return {
    subject: channel ? topicForClient(d.topic, allowEmptyTopicName) : '',
    topic_links: !channel || !rc.topicLinks ? [] : rc.topicLinks(d.topic),
  } satisfies Partial<Schema<'Message'>>;
}

export const flagsOf = (flags: number | null): Schema<'Message'>['flags'] => (flags === null ? ['read', 'historical'] : flagsToApi(flags));

/** The edits the organization shows, when there are any. */
export function editHistoryField(
  d: MessageDict,
  rc: DictReadContext,
  allowEmptyTopicName: boolean,
): Pick<Schema<'Message'>, 'edit_history'> {
  const history = visibleEdits(d.edits, rc.realm.message_edit_history_visibility_policy);
  return history.length ? { edit_history: history.map((e) => toApiEditEntry(e, allowEmptyTopicName)) } : {};
}

/*
 * The organization's message_edit_history_visibility_policy, applied per
 * request (a change of the setting invalidates no dict). With 'moves' it
 * shows only where messages went: the entries that moved the message (topic
 * or channel), without their content fields, so a content edit made with a
 * move leaks nothing either. An allowlist, as Zulip's: a new kind of field
 * stays hidden.
 */
function visibleEdits(edits: EditRow[], policy: RealmRow['message_edit_history_visibility_policy']): EditRow[] {
  if (policy === 'none' || edits.length === 0) return [];
  if (policy === 'all') return edits;
  return edits.filter(isMove).map(withoutContent);
}
const isMove = (e: EditRow): boolean => e.prev_topic !== null || e.prev_stream !== null;
const withoutContent = (e: EditRow): EditRow => ({ ...e, prev_content: null, prev_rendered_content: null });

/** A participant of a direct message, as display_recipient lists them. */
const toDisplayRecipient = (u: UserRow): Schema<'DisplayRecipientUser'> => ({
  id: u.id,
  email: u.email,
  full_name: u.full_name,
  is_mirror_dummy: u.is_mirror_dummy,
});

function senderAvatar(sender: UserRow, rc: DictReadContext, opts: MessageViewOptions): string | null {
  let url = rc.senderAvatars.get(sender.id);
  if (url === undefined) {
    url = avatarUrl(sender, opts.clientGravatar && canSeeDeliveryEmail(sender, opts.viewer));
    rc.senderAvatars.set(sender.id, url);
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
