import type { Knex } from 'knex';
import type { TableInsert, TableRow } from '../../generated/tables';
import { invalidates } from '../db/invalidations';
import { dialectOf } from '../db/connection';
import { flagMask } from '../domain/flags';
import { nowSeconds } from './ids';
import { addUnlistedReceivers, eachReceiverBlock, listRowsOfMessage, userIdsIn } from './message-receivers';
import { syncSparseFlagsOfMessage } from './sparse-flags';
import { READ } from './unread';
import { searchTerms } from '../domain/search';
import { reindexMessages } from './search-index';
import { listTopicsOfMessages, refreshTopicSummaries } from './topic-summaries';

type Q = Knex | Knex.Transaction;

/**
 * Ids per statement when a statement names the messages of a move: SQLite
 * allows 32,766 bound variables, so a 10,000-message move is two statements
 * of each kind.
 */
export const MOVE_CHUNK = 5000;

async function eachChunk(ids: readonly number[], run: (slice: number[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < ids.length; i += MOVE_CHUNK) await run(ids.slice(i, i + MOVE_CHUNK));
}

/**
 * Locks the message row until the transaction ends (MariaDB). SQLite runs
 * one transaction at a time on its single connection, which serialises
 * edits the same way.
 */
export async function lockMessageRow(trx: Knex.Transaction, id: number): Promise<void> {
  const query = trx('messages').where({ id }).first('id');
  if (dialectOf(trx) === 'mysql') query.forUpdate();
  await query;
}

export interface ContentChange {
  content: string;
  rendered_content: string;
  rendered_content_version: number;
  is_me_message: boolean;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
  last_edit_time: number;
}

/**
 * Writes new content only if the stored content is still `expected`: the
 * check of prev_content_sha256 and the write are one statement, so of two
 * edits made against the same content exactly one changes a row.
 * Returns whether the row changed.
 */
export async function updateMessageContentIf(q: Q, id: number, expected: string, change: ContentChange): Promise<boolean> {
  // Byte for byte: MariaDB's collation would call "Hi" and "hi " equal.
  const same = dialectOf(q) === 'mysql' ? 'CAST(content AS BINARY) = CAST(? AS BINARY)' : 'content = ?';
  const n = await q('messages')
    .where({ id })
    .whereRaw(same, [expected])
    .update({ ...change, has_edit_history: true });
  if (Number(n) !== 1) return false;
  const { topic } = (await q('messages').where({ id }).first('topic')) as { topic: string };
  await reindexMessages(q, [{ id, before: { topic, content: expected }, after: { topic, content: change.content } }]);
  return true;
}

/** A channel message of a topic, with its date (the move time limits). */
export interface TopicMessage {
  id: number;
  date_sent: number;
}

/**
 * Messages of a channel's topic in id order, from `fromId` on when given;
 * with `accessUserId` only those the user holds a row for (a private
 * channel whose history they cannot read).
 */
export async function listTopicMessages(
  q: Q,
  recipientId: number,
  topicKey: string,
  opts: { fromId?: number; accessUserId?: number } = {},
): Promise<TopicMessage[]> {
  const query = q('messages as m').where({ 'm.recipient_id': recipientId, 'm.topic_key': topicKey });
  if (opts.fromId !== undefined) query.where('m.id', '>=', opts.fromId);
  if (opts.accessUserId !== undefined) {
    query.whereIn('m.id', q('user_messages').where('user_id', opts.accessUserId).select('message_id'));
  }
  const rows: Array<{ id: number; date_sent: number | string }> = await query.orderBy('m.id').select('m.id', 'm.date_sent');
  return rows.map((r) => ({ id: Number(r.id), date_sent: Number(r.date_sent) }));
}

/** Whether a topic has messages other than these (the notices' wording). */
export async function topicHasOtherMessages(
  q: Q,
  recipientId: number,
  topicKey: string,
  excludeIds: readonly number[],
  accessUserId?: number,
): Promise<boolean> {
  const query = q('messages as m').where({ 'm.recipient_id': recipientId, 'm.topic_key': topicKey });
  // The ids are few here (the notices run only when the count is small or the ids are all of a topic).
  if (excludeIds.length && excludeIds.length <= MOVE_CHUNK) query.whereNotIn('m.id', excludeIds);
  if (accessUserId !== undefined) query.whereIn('m.id', q('user_messages').where('user_id', accessUserId).select('message_id'));
  return (await query.first('m.id')) !== undefined;
}

export interface MoveChange {
  recipient_id: number;
  topic: string;
  topic_key: string;
  /** null leaves it: resolving or unresolving a topic is not a move (last_moved_timestamp). */
  last_moved_time: number | null;
}

/**
 * Moves messages to another channel and/or topic: one UPDATE per chunk of
 * ids; then the topic rows of the topics they left and of the one they
 * joined are made from the messages again.
 */
export async function moveMessageRows(q: Q, ids: readonly number[], change: MoveChange): Promise<void> {
  const { last_moved_time, ...where } = change;
  const values: Partial<TableInsert<'messages'>> = { ...where, has_edit_history: true };
  if (last_moved_time !== null) values.last_moved_time = last_moved_time;
  const left = await listTopicsOfMessages(q, ids);
  await eachChunk(ids, async (slice) => {
    await reindexMovedTopics(q, slice, change.topic);
    await q('messages').whereIn('id', slice).update(values);
  });
  await refreshTopicSummaries(q, [...left, { recipient_id: change.recipient_id, topic_key: change.topic_key }]);
}

/**
 * The search rows of messages whose topic changes words (a rename, not a
 * move between channels under the same name, which leaves them as they are).
 */
async function reindexMovedTopics(q: Q, ids: number[], newTopic: string): Promise<void> {
  const newWords = searchTerms(newTopic);
  const sameWords = (topic: string) => {
    const old = searchTerms(topic);
    return old.length === newWords.length && old.every((w) => newWords.includes(w));
  };
  const rows: Array<{ id: number; topic: string }> = await q('messages').whereIn('id', ids).select('id', 'topic');
  const changed = rows.filter((r) => !sameWords(r.topic)).map((r) => Number(r.id));
  if (changed.length === 0) return;
  const full: Array<{ id: number; topic: string; content: string }> = await q('messages')
    .whereIn('id', changed)
    .select('id', 'topic', 'content');
  await reindexMessages(
    q,
    full.map((r) => ({ id: Number(r.id), before: { topic: r.topic, content: r.content }, after: { topic: newTopic, content: r.content } })),
  );
}

export interface EditEntry {
  user_id: number;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string | null;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}

/** The edit-history entry of one message (the edited one, which may carry content). */
export async function insertEditEntry(q: Q, messageId: number, e: EditEntry): Promise<void> {
  await q('message_edits').insert({ message_id: messageId, ...e });
}

/** The same topic/channel entry for many moved messages, one INSERT … SELECT per chunk of ids. */
export async function insertMoveEntries(q: Q, ids: readonly number[], e: EditEntry): Promise<void> {
  const cols = ['message_id', 'user_id', 'timestamp', 'prev_topic', 'topic', 'prev_stream', 'stream'];
  const consts = [e.user_id, e.timestamp, e.prev_topic ?? null, e.topic ?? null, e.prev_stream ?? null, e.stream ?? null];
  await eachChunk(ids, (slice) =>
    q.raw(
      `INSERT INTO message_edits (${cols.join(', ')}) SELECT id, ?, ?, ?, ?, ?, ? FROM messages WHERE id IN (${slice
        .map(() => '?')
        .join(', ')})`,
      [...consts, ...slice],
    ),
  );
}

/** Each user's flags on one message. */
export async function listUserMessageFlags(q: Q, messageId: number): Promise<Map<number, number>> {
  const rows = await listRowsOfMessage(q, messageId);
  return new Map(rows.map((r) => [r.user_id, r.flags]));
}

/** The mention bits an edit recomputes (group_mentioned is not one: group mentions set `mentioned`). */
const MENTION_BITS = flagMask('mentioned') + flagMask('stream_wildcard_mentioned') + flagMask('topic_wildcard_mentioned');

/** Rewrites the mention bits of users whose bits changed, grouped by their new bits (a statement per distinct value). */
export async function setMentionBits(q: Q, messageId: number, bitsByUser: ReadonlyMap<number, number>): Promise<void> {
  const byBits = new Map<number, number[]>();
  for (const [userId, bits] of bitsByUser) byBits.set(bits, [...(byBits.get(bits) ?? []), userId]);
  for (const [bits, userIds] of byBits) {
    await eachChunk(userIds, (slice) =>
      q('user_messages')
        .where({ message_id: messageId })
        .whereIn('user_id', slice)
        .update({ flags: q.raw('(flags & ~?) | ?', [MENTION_BITS, bits]) }),
    );
  }
  await syncSparseFlagsOfMessage(q, messageId, [...bitsByUser.keys()], MENTION_BITS);
}

/** Every subscription row of a channel, active or not (those who may hold rows of its messages). */
export async function listEverSubscribedIds(q: Q, recipientId: number): Promise<number[]> {
  return (await q('subscriptions').where({ recipient_id: recipientId }).pluck('user_id')).map(Number);
}

/** Active subscribers of a channel, deactivated users included, with their role. */
export async function listActiveSubscribersWithRole(
  q: Q,
  recipientId: number,
): Promise<Array<{ id: number; role: number; is_active: boolean }>> {
  const rows: Array<Pick<TableRow<'users'>, 'id' | 'role' | 'is_active'>> = await q('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.recipient_id': recipientId, 's.active': true })
    .select('u.id', 'u.role', 'u.is_active');
  return rows.map((r) => ({ id: Number(r.id), role: Number(r.role), is_active: Boolean(r.is_active) }));
}

/** Roles of users, by id. */
export async function getRoles(q: Q, userIds: readonly number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (let i = 0; i < userIds.length; i += MOVE_CHUNK) {
    const rows: Array<{ id: number; role: number }> = await q('users')
      .whereIn('id', userIds.slice(i, i + MOVE_CHUNK))
      .select('id', 'role');
    for (const r of rows) out.set(Number(r.id), Number(r.role));
  }
  return out;
}

/** Drops these users' rows of these messages: a DELETE per block of the messages' receivers among them (ADR 0059). */
export async function deleteUserMessagesOf(q: Q, userIds: readonly number[], messageIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  await eachReceiverBlock(
    q,
    messageIds,
    (users, msgs) => q('user_messages').whereRaw(userIdsIn('user_id', users)).whereIn('message_id', msgs).del(),
    new Set(userIds),
  );
  invalidates(q, { kind: 'received', userIds });
}

/**
 * Gives the active subscribers of a channel a row, flagged read, for each of
 * these messages they have none of: one INSERT … SELECT per chunk of
 * messages, whatever the number of subscribers. Read rows need no side
 * rows: read is not a sparse flag (src/domain/sparse-flags.ts), and only
 * unread rows below a horizon have unread side rows (src/queries/unread.ts).
 */
export async function insertReadRowsForSubscribers(q: Q, recipientId: number, messageIds: readonly number[]): Promise<void> {
  // Locked on MariaDB: a locking read sees the newest subscriptions, not the transaction's
  // snapshot, and holds them until the rows are written.
  const read = q('subscriptions').where({ recipient_id: recipientId, active: true });
  if (dialectOf(q as Knex) === 'mysql') read.forShare();
  const subscribers = ((await read.pluck('user_id')) as unknown[]).map(Number);
  // Listed before the rows are written: a subscriber a message does not list
  // holds no row of it (lists are supersets), so gets one below. Only those
  // are appended: a list is never trimmed, and appending every subscriber at
  // each move into the channel (back and forth, say) would grow it each time.
  await addUnlistedReceivers(q, messageIds, subscribers);
  await eachChunk(messageIds, (slice) =>
    q.raw(
      `INSERT INTO user_messages (user_id, message_id, flags)
       SELECT s.user_id, m.id, ? FROM subscriptions s JOIN messages m ON m.id IN (${slice.map(() => '?').join(', ')})
       WHERE s.recipient_id = ? AND s.active = ?
         AND NOT EXISTS (SELECT 1 FROM user_messages um WHERE um.user_id = s.user_id AND um.message_id = m.id)`,
      [READ, ...slice, recipientId, true],
    ),
  );
  // Whose rows were added is the subscriber list the statement read.
  invalidates(q, { kind: 'received', userIds: 'all' });
}

/** The channel's oldest message now, written to channels.first_message_id; returns the old and new values. */
export async function refreshFirstMessageId(
  q: Q,
  channelId: number,
  recipientId: number,
): Promise<{ before: number | null; after: number | null }> {
  const channel = await q('channels').where({ id: channelId }).first('first_message_id');
  const row = await q('messages').where({ recipient_id: recipientId }).min('id as first').first();
  const before = channel?.first_message_id == null ? null : Number(channel.first_message_id);
  const after = row?.first == null ? null : Number(row.first);
  if (before !== after) {
    await q('channels').where({ id: channelId }).update({ first_message_id: after });
    invalidates(q, { kind: 'channel', channelIds: [channelId] });
  }
  return { before, after };
}

export interface AttachmentRow {
  id: number;
  owner_id: number;
  file_name: string;
  path_id: string;
  size: number;
  create_time: number;
}

/** AttachmentRow's columns as the driver returns them. */
type AttachmentSelected = Pick<TableRow<'attachments'>, keyof AttachmentRow>;

const toAttachment = (r: AttachmentSelected): AttachmentRow => ({
  id: Number(r.id),
  owner_id: Number(r.owner_id),
  file_name: String(r.file_name),
  path_id: String(r.path_id),
  size: Number(r.size),
  create_time: Number(r.create_time),
});

/** Attachments a message links to. */
export async function listMessageAttachments(q: Q, messageId: number): Promise<AttachmentRow[]> {
  const rows: AttachmentSelected[] = await q('attachments as a')
    .join('attachment_messages as am', 'am.attachment_id', 'a.id')
    .where('am.message_id', messageId)
    .select('a.id', 'a.owner_id', 'a.file_name', 'a.path_id', 'a.size', 'a.create_time');
  return rows.map(toAttachment);
}

export async function unlinkAttachments(q: Q, messageId: number, attachmentIds: readonly number[]): Promise<void> {
  if (attachmentIds.length === 0) return;
  await q('attachment_messages').where({ message_id: messageId }).whereIn('attachment_id', attachmentIds).del();
}

/** Of these attachments, the ones no message links to any more. */
export async function listUnlinkedAttachments(q: Q, attachmentIds: readonly number[]): Promise<AttachmentRow[]> {
  if (attachmentIds.length === 0) return [];
  const rows: AttachmentSelected[] = await q('attachments as a')
    .whereIn('a.id', attachmentIds)
    .whereNotExists(q('attachment_messages as am').whereRaw('am.attachment_id = a.id').select(q.raw('1')))
    .select('a.id', 'a.owner_id', 'a.file_name', 'a.path_id', 'a.size', 'a.create_time');
  return rows.map(toAttachment);
}

/** Whether a message links to any attachment (messages.has_attachment). */
export async function messageHasAttachments(q: Q, messageId: number): Promise<boolean> {
  return (await q('attachment_messages').where({ message_id: messageId }).first('attachment_id')) !== undefined;
}

export const editTimestamp = nowSeconds;
