import type { Knex } from 'knex';
import type { Schema } from '../../contract';
import { flagMask } from '../../domain/flags';
import { getDmParticipants } from '../../queries/messages';
import { listMutedRecipientIds, listUnreadRows, listUserMessageRowsByIds, UnreadRow } from '../../queries/register';
import { listUserTopicPolicies, policyKey } from '../../queries/user-topics';
import { isTopicMuted, topicKey } from '../../domain/user-topics';
import { topicForClient } from '../../serializers/messages';
import { RecipientType } from '../../domain/recipients';

/** Zulip's MAX_UNREAD_MESSAGES: older unread messages are left out and old_unreads_missing says so. */
export const MAX_UNREAD_MESSAGES = 50_000;

const MENTIONED = flagMask('mentioned');
const WILDCARD = flagMask('stream_wildcard_mentioned') + flagMask('topic_wildcard_mentioned');

/** Whether an unread message counts in `mentions`: a personal or group mention, or a wildcard outside a muted channel. */
const countsAsMention = (flags: number, muted: boolean) => (flags & MENTIONED) !== 0 || ((flags & WILDCARD) !== 0 && !muted);

interface Bucket<K> {
  key: K;
  ids: number[];
}

function bucket<K extends string | number>(map: Map<K, Bucket<K>>, key: K, id: number): void {
  const b = map.get(key);
  if (b) b.ids.push(id);
  else map.set(key, { key, ids: [id] });
}

const sortedBuckets = <K extends string | number>(map: Map<K, Bucket<K>>) =>
  [...map.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

export interface UnreadContext {
  userId: number;
  /** Channels the user left: their unread messages do not count (Zulip's get_inactive_recipient_ids). */
  inactiveRecipients: ReadonlySet<number>;
  mutedRecipients: ReadonlySet<number>;
  /** The user's topic policies (listUserTopicPolicies): a muted topic counts apart, an unmuted or followed one in a muted channel counts. */
  topicPolicies: ReadonlyMap<string, number>;
  allowEmptyTopicName: boolean;
}

/** Whether a channel message is muted for the user (Zulip's is_row_muted). */
const rowMuted = (
  r: Pick<UnreadRow, 'recipient_id' | 'topic'>,
  mutedChannels: ReadonlySet<number>,
  policies: ReadonlyMap<string, number>,
) => isTopicMuted(mutedChannels.has(r.recipient_id), policies.get(policyKey(r.recipient_id, topicKey(r.topic))));

/**
 * unread_msgs in Zulip's shape (aggregate_unread_data): one-to-one and
 * self conversations in `pms` by the other participant, group
 * conversations in `huddles` by all participants' ids, channel messages by
 * channel and topic (case-insensitively); `count` leaves out muted
 * messages (a muted channel's, unless their topic is unmuted or followed,
 * and a muted topic's); wildcard mentions count as mentions only when not
 * muted. `streams` still lists muted topics, as Zulip's does.
 */
export async function unreadState(db: Knex, c: UnreadContext): Promise<Schema<'UnreadMessages'>> {
  const newestFirst = await listUnreadRows(db, c.userId, MAX_UNREAD_MESSAGES);
  const rows = newestFirst.filter((r) => !c.inactiveRecipients.has(r.recipient_id)).reverse();
  const dmRecipients = [...new Set(rows.filter((r) => r.recipient_type !== RecipientType.CHANNEL).map((r) => r.recipient_id))];
  const participants = await getDmParticipants(db, dmRecipients);

  const pms = new Map<number, Bucket<number>>();
  const huddles = new Map<string, Bucket<string>>();
  const streams = new Map<string, Bucket<string> & { streamId: number; topic: string }>();
  const mentions: number[] = [];
  let count = 0;
  for (const r of rows) {
    const muted = r.recipient_type === RecipientType.CHANNEL && rowMuted(r, c.mutedRecipients, c.topicPolicies);
    if (!muted) count++;
    if (countsAsMention(r.flags, muted)) mentions.push(r.message_id);
    if (r.recipient_type === RecipientType.CHANNEL) {
      addStream(streams, r, c.allowEmptyTopicName);
      continue;
    }
    const ids = participants.get(r.recipient_id) ?? [r.sender_id, c.userId];
    if (ids.length > 2) bucket(huddles, [...ids].sort((a, b) => a - b).join(','), r.message_id);
    else bucket(pms, ids.find((id) => id !== c.userId) ?? c.userId, r.message_id);
  }
  return {
    count,
    pms: sortedBuckets(pms).map((b) => ({ other_user_id: b.key, sender_id: b.key, unread_message_ids: b.ids })),
    streams: [...streams.values()]
      .sort((a, b) => a.streamId - b.streamId || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((b) => ({ stream_id: b.streamId, topic: b.topic, unread_message_ids: b.ids })),
    huddles: sortedBuckets(huddles).map((b) => ({ user_ids_string: b.key, unread_message_ids: b.ids })),
    mentions,
    old_unreads_missing: newestFirst.length === MAX_UNREAD_MESSAGES,
  };
}

function addStream(streams: Map<string, Bucket<string> & { streamId: number; topic: string }>, r: UnreadRow, allowEmpty: boolean): void {
  const topic = topicForClient(r.topic, allowEmpty);
  const key = `${r.recipient_type_id}\u0000${topic.toLowerCase()}`;
  const b = streams.get(key);
  if (b) b.ids.push(r.message_id);
  else streams.set(key, { key: topic.toLowerCase(), ids: [r.message_id], streamId: r.recipient_type_id, topic });
}

/** One message of update_message_flags' message_details. */
export type UnreadMessageDetails = Schema<'UpdateMessageFlagsMessageDetails'>;

/**
 * message_details of an update_message_flags event removing `read`
 * (Zulip's format_unread_message_details): per message ID, what a client
 * needs to put the message back into its unread_msgs without fetching it —
 * the channel and topic (and whether the channel is muted), or the other
 * participants of the conversation (none for a note to oneself), and
 * `mentioned` only when true, by the same rule as unread_msgs.mentions.
 * Topics are stored values; the queue shapes "" for clients without
 * empty_topic_name (src/events/shape.ts). Four statements at most.
 */
export async function unreadMessageDetails(db: Knex, userId: number, messageIds: number[]): Promise<Record<string, UnreadMessageDetails>> {
  const rows = await listUserMessageRowsByIds(db, userId, messageIds);
  const channels = [...new Set(rows.filter((r) => r.recipient_type === RecipientType.CHANNEL).map((r) => r.recipient_id))];
  const conversations = [...new Set(rows.filter((r) => r.recipient_type !== RecipientType.CHANNEL).map((r) => r.recipient_id))];
  const [muted, participants, policies] = await Promise.all([
    listMutedRecipientIds(db, userId, channels),
    getDmParticipants(db, conversations),
    channels.length ? listUserTopicPolicies(db, userId) : new Map<string, number>(),
  ]);
  const out: Record<string, UnreadMessageDetails> = {};
  for (const r of rows) {
    const isMuted = r.recipient_type === RecipientType.CHANNEL && rowMuted(r, muted, policies);
    const details: UnreadMessageDetails =
      r.recipient_type === RecipientType.CHANNEL
        ? { type: 'stream', stream_id: r.recipient_type_id, topic: r.topic, unmuted_stream_msg: !isMuted }
        : { type: 'private', user_ids: (participants.get(r.recipient_id) ?? []).filter((id) => id !== userId).sort((a, b) => a - b) };
    if (countsAsMention(r.flags, isMuted)) details.mentioned = true;
    out[String(r.message_id)] = details;
  }
  return out;
}
