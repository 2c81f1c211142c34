import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { causalRead } from '../db/causal-read';
import { dialectOf } from '../db/connection';
import { holdWrite, insertNewRow, integerLiteral, type NewRowId } from '../db/held-writes';
import { invalidates } from '../db/invalidations';
import type { Schema } from '../contract';
import { RecipientType } from '../domain/recipients';
import { inChunks, insertOne, insertRows, type NewId } from './ids';
import { addReceivers, holdReceiversOfNewMessage } from './message-receivers';
import { indexNewMessage } from './search-index';
import { mapBools, UserRow } from './rows';
import { insertSparseFlagRows, insertSparseFlagRowsOfUser, syncSparseFlagsOfUser } from './sparse-flags';
import { READ, syncUnreadRowsOfUser } from './unread';

type Q = Knex | Knex.Transaction;

export interface MessageRow {
  id: number;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  type: number;
  topic: string;
  /** The topic lower-cased: topic narrows and lookups are case-insensitive. */
  topic_key: string;
  content: string;
  rendered_content: string | null;
  rendered_content_version: number | null;
  date_sent: number;
  sending_client: string;
  last_edit_time: number | null;
  last_moved_time: number | null;
  /** Whether message_edits holds entries for it (migration 010). */
  has_edit_history: boolean;
  /** Whether submessages holds rows for it (migration 017). */
  has_submessages: boolean;
  is_me_message: boolean;
  has_attachment: boolean;
  has_image: boolean;
  has_link: boolean;
  /** Joined from recipients. */
  recipient_type: number;
  recipient_type_id: number;
  /** Joined from channels: the channel's id and name (null for direct messages). */
  channel_id: number | null;
  channel_name: string | null;
}

/**
 * Adds what a MessageRow carries beyond `messages` to a query over `messages as m`:
 * the recipient's type and the channel's id and name, so serializing needs no
 * separate lookup for them.
 */
export function selectMessageColumns(qb: Knex.QueryBuilder): Knex.QueryBuilder {
  return qb
    .join('recipients as r', 'r.id', 'm.recipient_id')
    .leftJoin('channels as c', 'c.recipient_id', 'm.recipient_id')
    .select('m.*', 'r.type as recipient_type', 'r.type_id as recipient_type_id', 'c.id as channel_id', 'c.name as channel_name');
}

export const toMessageRow = (r: object) => mapBools<MessageRow>(r);

export async function getMessageRows(q: Q, ids: number[]): Promise<MessageRow[]> {
  if (ids.length === 0) return [];
  const rows = await inChunks<object>(ids, (slice) => selectMessageColumns(q('messages as m').whereIn('m.id', slice).orderBy('m.id')));
  return rows.map(toMessageRow);
}

export async function getMessageRow(q: Q, id: number): Promise<MessageRow | undefined> {
  return (await getMessageRows(q, [id]))[0];
}

/** The viewer's flags for these messages; messages without a row are absent. */
export async function getFlagsForUser(q: Q, userId: number, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await inChunks<{ message_id: number; flags: number | string }>(ids, (slice) =>
    q('user_messages').where({ user_id: userId }).whereIn('message_id', slice).select('message_id', 'flags'),
  );
  return new Map(rows.map((r) => [r.message_id, Number(r.flags)]));
}

/** The columns of a new message (the rest have defaults or stay NULL until an edit). */
export type NewMessageRow = {
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  type: number;
  topic: string;
  topic_key: string;
  content: string;
  rendered_content: string;
  rendered_content_version: number;
  date_sent: number;
  sending_client: string;
  is_me_message: boolean;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
};

/**
 * Inserts a message row and its search rows. In a MySQL/MariaDB transaction
 * nothing is sent yet: the id comes back with the packet that carries the
 * insert (a send's COMMIT), and the transaction's later held writes name it
 * (src/db/held-writes.ts, ADR 0026). Elsewhere the row is written now.
 */
export async function insertMessage(q: Q, row: NewMessageRow): Promise<NewRowId> {
  const id = await insertNewRow(q, 'messages', row);
  // Searchable from the moment the message is (same transaction).
  await indexNewMessage(q, id, row.topic, row.content);
  return id;
}

/**
 * The id of this exact message row, if it is stored (read causally,
 * src/db/causal-read.ts); null if it is not.
 * - With its id, by the id, the other columns checked too: the id alone is
 *   not proof, for a Galera cluster that loses a node recomputes each node's
 *   auto-increment offset, and another node may hand out the same id to
 *   another message.
 * - Without it (a held insert whose packet was never answered), among the
 *   organization's messages of that second (the (realm_id, date_sent)
 *   index), by sender, recipient, topic and content. An identical message
 *   from the same sender to the same place in the same second would be
 *   taken for it (ADR 0026 weighs this).
 */
export async function findStoredMessage(
  db: Knex,
  m: Pick<NewMessageRow, 'realm_id' | 'sender_id' | 'recipient_id' | 'topic' | 'date_sent' | 'content'>,
  id?: number,
): Promise<number | null> {
  const { realm_id, sender_id, recipient_id, topic, date_sent, content } = m;
  const where = { realm_id, sender_id, recipient_id, topic, date_sent, content, ...(id === undefined ? {} : { id }) };
  const rows = await causalRead(db, db('messages').where(where).orderBy('id', 'desc').limit(1).select('id'));
  return rows.length > 0 ? Number((rows[0] as { id: number }).id) : null;
}

/** One user_messages row per receiver of a new message, in batches (a 1,000-subscriber channel is two statements). */
export async function insertUserMessages(q: Q, messageId: NewId, rows: ReadonlyArray<{ userId: number; flags: number }>): Promise<void> {
  // A plain multi-row VALUES list: knex writes SQLite batch inserts as a
  // 100-arm `SELECT … UNION ALL` (for SQLite older than 3.7.11), which took
  // most of a send's time on SQLite, measured.
  // Nothing reads these statements' results: on MySQL they go out with the
  // transaction's next statement or its COMMIT (src/db/held-writes.ts).
  // On MySQL the values are written into the text as integer literals (ADR
  // 0021): each is checked to be a safe integer, so nothing needs escaping,
  // and mysql2 no longer formats 300 bindings per send (with the arrays that
  // carried them, a sixth of what a send allocated, measured). SQLite keeps
  // placeholders: its statements are prepared once per text and reused
  // (ADR 0015), which a text with values in it would defeat.
  const literals = dialectOf(q as Knex) === 'mysql';
  for (let i = 0; i < rows.length; i += 500) {
    await holdWrite(q, (ids) => {
      const head = 'INSERT INTO user_messages (user_id, message_id, flags) VALUES ';
      if (literals) return { sql: head + userMessageTuples(ids.literal(messageId), rows, i, i + 500), bindings: [] };
      const slice = rows.slice(i, i + 500);
      const tuple = `(?, ${ids.sql(messageId)}, ?)`;
      const message = ids.bindings(messageId);
      return { sql: head + slice.map(() => tuple).join(', '), bindings: slice.flatMap((r) => [r.userId, ...message, r.flags]) };
    });
  }
  await insertSparseFlagRows(q, messageId, rows);
  // Who holds these rows: the list that stands in for an index by message (ADR 0059).
  await holdReceiversOfNewMessage(
    q,
    messageId,
    rows.map((r) => r.userId),
  );
  // No unread side rows: a new message's id is above every receiver's unread
  // horizon, where the rows themselves are the index (ADR 0024).
  invalidates(q, { kind: 'received', userIds: rows.map((r) => r.userId) });
}

/** `(user_id, message_id, flags)` literals of rows[from, to), each value checked to be a safe integer; the message id is SQL text already. */
function userMessageTuples(messageSql: string, rows: ReadonlyArray<{ userId: number; flags: number }>, from: number, to: number): string {
  const message = `,${messageSql},`;
  const end = Math.min(to, rows.length);
  const tuples = new Array<string>(end - from);
  for (let i = from; i < end; i++) {
    const r = rows[i]!;
    tuples[i - from] = '(' + integerLiteral(r.userId) + message + integerLiteral(r.flags) + ')';
  }
  return tuples.join(',');
}

/**
 * A user's rows for messages they had no row for (channel history they act
 * on, or a soft-deactivated user's catch-up), all with the same flags.
 * `ignoreExisting`: a row that exists meanwhile (a send that kept the user,
 * committing while a catch-up runs) is left as it is.
 */
export async function insertUserMessagesOfUser(
  q: Q,
  userId: number,
  messageIds: readonly number[],
  flags: number,
  ignoreExisting = false,
): Promise<void> {
  await insertRows(
    q,
    'user_messages',
    messageIds.map((message_id) => ({ user_id: userId, message_id, flags })),
    ignoreExisting ? ['user_id', 'message_id'] : undefined,
  );
  await insertSparseFlagRowsOfUser(q, userId, messageIds, flags);
  await addReceivers(q, messageIds, [userId]);
  // Old messages, maybe below the horizon: unread ones need their side rows.
  if ((flags & READ) === 0) await syncUnreadRowsOfUser(q, userId, messageIds, 'remove');
  invalidates(q, { kind: 'received', userIds: [userId] });
}

/** Sets (`add`) or clears (`remove`) flag bits on a user's rows for these messages, 1,000 messages per statement. */
export async function updateUserMessageFlags(
  q: Q,
  userId: number,
  messageIds: readonly number[],
  op: 'add' | 'remove',
  mask: number,
): Promise<void> {
  const expr = op === 'add' ? 'flags | ?' : 'flags & ~?';
  for (let i = 0; i < messageIds.length; i += 1000) {
    await q('user_messages')
      .where('user_id', userId)
      .whereIn('message_id', messageIds.slice(i, i + 1000))
      .update({ flags: q.raw(expr, [mask]) });
  }
  await syncSparseFlagsOfUser(q, userId, messageIds, mask);
  if ((mask & READ) !== 0) await syncUnreadRowsOfUser(q, userId, messageIds, op);
}

/** Whether the user holds a row for the message (received it, or acted on it as history). */
export async function hasUserMessage(q: Q, userId: number, messageId: number): Promise<boolean> {
  const row = await q('user_messages').where({ user_id: userId, message_id: messageId }).first('message_id');
  return row !== undefined;
}

/** Records a channel's first message, unless one is recorded already. */
export async function setChannelFirstMessageId(q: Q, channelId: number, messageId: number): Promise<void> {
  const changed = await q('channels').where({ id: channelId }).whereNull('first_message_id').update({ first_message_id: messageId });
  // Only a channel's first message changes the row: other sends keep its cached copy.
  if (changed > 0) invalidates(q, { kind: 'channel', channelIds: [channelId] });
}

export interface ReactionRow {
  id: number;
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  /** Written only from the contract's namespaces (src/actions/reactions.ts). */
  reaction_type: Schema<'ReactionType'>;
}

/** Reactions of these messages, oldest first. */
export async function getReactions(q: Q, ids: number[]): Promise<ReactionRow[]> {
  if (ids.length === 0) return [];
  return q('reactions')
    .whereIn('message_id', ids)
    .orderBy('id')
    .select('id', 'message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type');
}

export interface EditRow {
  id: number;
  message_id: number;
  user_id: number | null;
  timestamp: number;
  prev_content: string | null;
  prev_rendered_content: string | null;
  prev_topic: string | null;
  topic: string | null;
  prev_stream: number | null;
  stream: number | null;
}

/** Edits and moves of these messages, most recent first. */
export async function getEdits(q: Q, ids: number[]): Promise<EditRow[]> {
  if (ids.length === 0) return [];
  return q('message_edits').whereIn('message_id', ids).orderBy('id', 'desc');
}

export interface ChannelRef {
  id: number;
  name: string;
  recipient_id: number;
}

/** A DM conversation's group: recipient_id is null only between its two inserts (src/actions/send.ts). */
export interface DmGroupRow {
  id: number;
  recipient_id: number | null;
}

/** The DM group of a set of participants, by dmGroupHash. */
export async function getDmGroupByHash(q: Q, hash: string): Promise<DmGroupRow | undefined> {
  return q('dm_groups').where({ huddle_hash: hash }).first('id', 'recipient_id');
}

/** Creates a DM group with its recipient; the participants' subscription rows make its audience. Four statements. */
export async function insertDmGroup(q: Q, hash: string, userIds: readonly number[]): Promise<{ groupId: number; recipientId: number }> {
  const groupId = await insertOne(q, 'dm_groups', { huddle_hash: hash, group_size: userIds.length });
  const recipientId = await insertOne(q, 'recipients', { type: RecipientType.DM_GROUP, type_id: groupId });
  await q('dm_groups').where({ id: groupId }).update({ recipient_id: recipientId });
  await insertRows(
    q,
    'subscriptions',
    userIds.map((user_id) => ({ user_id, recipient_id: recipientId })),
  );
  return { groupId, recipientId };
}

/** Participants of DM conversations (their subscription rows), by recipient. */
export async function getDmParticipants(q: Q, recipientIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (recipientIds.length === 0) return out;
  const rows: Array<{ recipient_id: number; user_id: number }> = await q('subscriptions')
    .whereIn('recipient_id', recipientIds)
    .orderBy('user_id')
    .select('recipient_id', 'user_id');
  for (const r of rows) {
    const list = out.get(r.recipient_id) ?? [];
    list.push(r.user_id);
    out.set(r.recipient_id, list);
  }
  return out;
}

/** Participants of DM conversations with their user rows (sorted by id), by recipient. */
export async function getDmParticipantUsers(q: Q, recipientIds: number[]): Promise<Map<number, UserRow[]>> {
  const out = new Map<number, UserRow[]>();
  if (recipientIds.length === 0) return out;
  const rows: Array<TableRow<'users'> & { dm_recipient_id: number }> = await q('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .whereIn('s.recipient_id', recipientIds)
    .orderBy('s.user_id')
    .select('u.*', 's.recipient_id as dm_recipient_id');
  for (const r of rows) {
    const recipientId = Number(r.dm_recipient_id);
    const list = out.get(recipientId) ?? [];
    list.push(mapBools<UserRow>(r));
    out.set(recipientId, list);
  }
  return out;
}

export async function getUsersByIds(q: Q, ids: number[]): Promise<Map<number, UserRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q('users').whereIn('id', [...new Set(ids)]);
  return new Map(
    rows.map((r) => {
      const u = mapBools<UserRow>(r);
      return [u.id, u];
    }),
  );
}
