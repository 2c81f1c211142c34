import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';
import { dialectOf } from '../db/connection';
import { insertOne } from './ids';
import { deleteReceiversOf, listHolderIds, listReceiverBlocks, userIdsIn } from './message-receivers';
import { rawRows } from './rows';
import { listTopicsOfMessages, refreshTopicSummaries, type TopicOfMessages } from './topic-summaries';

/**
 * Deletion as archiving: a deleted message, with everything that hangs off
 * it (its recipients' rows and flags, reactions, edit history, links to
 * uploaded files), moves to the archived_* tables, so a deletion can be
 * undone. Every step is one statement over a list of ids, whatever the list
 * holds; lists longer than ARCHIVE_CHUNK are done in slices (SQLite binds at
 * most 32,766 variables per statement).
 */
type Q = Knex | Knex.Transaction;

export const ARCHIVE_CHUNK = 1000;

/** Zulip's ArchiveTransaction types: the retention policy, or someone deleting. */
export const ArchiveType = { RETENTION_POLICY: 1, MANUAL: 2 } as const;

/** Columns copied from `messages` to `archived_messages` as they are. */
export const MESSAGE_COLUMNS = [
  'id',
  'realm_id',
  'sender_id',
  'recipient_id',
  'type',
  'topic',
  'content',
  'rendered_content',
  'rendered_content_version',
  'date_sent',
  'sending_client',
  'last_edit_time',
  'last_moved_time',
  'is_me_message',
  'has_attachment',
  'has_image',
  'has_link',
] as const;
const REACTION_COLUMNS = ['id', 'message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type'] as const;
const EDIT_COLUMNS = [
  'id',
  'message_id',
  'user_id',
  'timestamp',
  'prev_content',
  'prev_rendered_content',
  'prev_topic',
  'topic',
  'prev_stream',
  'stream',
] as const;

/**
 * The tables that hang off a message, each with its archived twin and the
 * columns copied between them as they are: archiving copies live → archived
 * (archiveMessages), restoring archived → live (src/queries/archive-restore.ts),
 * the vacuum empties the archived ones (src/queries/archive-vacuum.ts).
 */
export const ARCHIVED_CHILD_TABLES: ReadonlyArray<{
  live: string;
  archived: string;
  columns: readonly string[];
  /** Restored only where this join finds a row (`t` is the archived row). */
  restoreJoin?: string;
}> = [
  { live: 'reactions', archived: 'archived_reactions', columns: REACTION_COLUMNS },
  { live: 'message_edits', archived: 'archived_message_edits', columns: EDIT_COLUMNS },
  { live: 'submessages', archived: 'archived_submessages', columns: ['id', 'message_id', 'sender_id', 'msg_type', 'content'] },
  {
    live: 'attachment_messages',
    archived: 'archived_attachment_messages',
    columns: ['attachment_id', 'message_id'],
    // Upload links come back only for uploads that still exist.
    restoreJoin: 'JOIN attachments a ON a.id = t.attachment_id',
  },
];

export const marks = (n: number) => new Array(n).fill('?').join(', ');

/** Bytes of the receivers' JSON one archiving statement carries at most. */
const JSON_BYTES_PER_STATEMENT = 4 * 1024 * 1024;

/** `items` in consecutive parts whose sizes add up to at most `limit` (an item larger than it is a part of its own). */
function bySize<T>(items: readonly T[], size: (item: T) => number, limit: number): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const n = size(item);
    if (part.length > 0 && bytes + n > limit) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(item);
    bytes += n;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}
export const quoted = (cols: readonly string[], prefix = '') => cols.map((c) => `${prefix}"${c}"`).join(', ');

/**
 * Moves these messages to the archive, per slice of ARCHIVE_CHUNK ids: the
 * copies (messages and four child tables), the deletes, and the receivers'
 * rows read and deleted a block at a time through their lists (ADR 0059:
 * a slice of one channel's messages is a block or two). Run it inside the
 * transaction that decided the deletion, so the copies and the deletes
 * commit together. The uploads themselves stay: only the links go.
 * Returns how many messages were deleted.
 */
export async function archiveMessages(
  q: Q,
  ids: readonly number[],
  archivedAt: number,
  archiveType: number,
  /** The archive_transactions row these messages leave in (createArchiveTransaction). */
  transactionId: number | null = null,
): Promise<number> {
  const mysql = dialectOf(q as Knex) === 'mysql';
  const ident = (sql: string) => (mysql ? sql.replace(/"/g, '`') : sql);
  let deleted = 0;
  const topics: TopicOfMessages[] = [];
  for (let i = 0; i < ids.length; i += ARCHIVE_CHUNK) {
    const slice = ids.slice(i, i + ARCHIVE_CHUNK);
    const list = marks(slice.length);
    // The receivers' rows travel as JSON [[user_id, flags], ...] in one column, by user id,
    // read by primary key through the messages' receiver lists (ADR 0059).
    const rowsOf = new Map<number, Array<[number, number]>>();
    const blocks = await listReceiverBlocks(q, slice);
    for (const [users, msgs] of blocks) {
      const rows: Array<{ user_id: number | string; message_id: number | string; flags: number | string }> = await q('user_messages')
        .whereRaw(userIdsIn('user_id', users))
        .whereIn('message_id', msgs)
        .select('user_id', 'message_id', 'flags');
      for (const r of rows) {
        const id = Number(r.message_id);
        const held = rowsOf.get(id);
        if (held) held.push([Number(r.user_id), Number(r.flags)]);
        else rowsOf.set(id, [[Number(r.user_id), Number(r.flags)]]);
      }
    }
    const json = new Map(slice.map((id) => [id, JSON.stringify((rowsOf.get(id) ?? []).sort((a, b) => a[0] - b[0]))]));
    // The JSON goes in the statement: as many messages a statement as keep it within
    // JSON_BYTES_PER_STATEMENT (a 3,000-holder channel's message is some 36 KB of it; MariaDB
    // refuses a packet past max_allowed_packet, 16 MiB by default). Usually the whole slice.
    for (const part of bySize(slice, (id) => json.get(id)!.length, JSON_BYTES_PER_STATEMENT)) {
      await q.raw(
        ident(
          `INSERT INTO archived_messages (${quoted(MESSAGE_COLUMNS)}, archived_at, archive_type, archive_transaction_id, user_messages)
           SELECT ${quoted(MESSAGE_COLUMNS, 'm.')}, ?, ?, ?, CASE m.id ${part.map(() => 'WHEN ? THEN ?').join(' ')} END
           FROM messages m WHERE m.id IN (${marks(part.length)})`,
        ),
        [archivedAt, archiveType, transactionId, ...part.flatMap((id) => [id, json.get(id)!]), ...part],
      );
    }
    for (const { live, archived, columns } of ARCHIVED_CHILD_TABLES) {
      await q.raw(
        ident(`INSERT INTO ${archived} (${quoted(columns)}) SELECT ${quoted(columns)} FROM ${live} WHERE message_id IN (${list})`),
        slice,
      );
    }
    // Children first, explicitly: on MariaDB user_messages has no foreign key to cascade
    // (ADR 0020), and the deletes cost the same on both databases where one does.
    for (const [users, msgs] of blocks) await q('user_messages').whereRaw(userIdsIn('user_id', users)).whereIn('message_id', msgs).del();
    await deleteReceiversOf(q, slice);
    for (const table of [...ARCHIVED_CHILD_TABLES.map((t) => t.live), 'message_search_terms'])
      await q(table).whereIn('message_id', slice).del();
    topics.push(...(await listTopicsOfMessages(q, slice)));
    deleted += await q('messages').whereIn('id', slice).del();
  }
  // Their topics' rows: a newer message's, or none when the topic is empty now.
  await refreshTopicSummaries(q, topics);
  // Whose user_messages rows went is not read here (the caller may know; this statement does not).
  if (deleted > 0) invalidates(q, { kind: 'received', userIds: 'all' });
  return deleted;
}

/**
 * A batch of archiving (Zulip's ArchiveTransaction): made in the transaction
 * that archives the batch, so it exists exactly when its messages were
 * moved. Returns its id.
 */
export async function createArchiveTransaction(q: Q, realmId: number, archiveType: number, timestamp: number): Promise<number> {
  return insertOne(q, 'archive_transactions', { realm_id: realmId, type: archiveType, timestamp, restored: false });
}

/** Removes an archive transaction that moved nothing (its messages were gone already). */
export async function deleteArchiveTransaction(q: Q, transactionId: number): Promise<void> {
  await q('archive_transactions').where({ id: transactionId }).del();
}

/** Whether this batch's messages are in the archive (the witness of a retention batch whose COMMIT went unanswered). */
export async function archiveTransactionHolds(q: Q, transactionId: number, messageId: number): Promise<boolean> {
  return (await q('archived_messages').where({ id: messageId, archive_transaction_id: transactionId }).first('id')) !== undefined;
}

/** Users holding a row for any of these messages (who received them, or acted on them as history). */
export async function listUserIdsWithRows(q: Q, ids: readonly number[]): Promise<number[]> {
  return listHolderIds(q, ids);
}

/**
 * The newest `limit` messages of a topic (case-insensitive, as topic
 * narrows), newest first; with `onlyWithRowOf`, only those that user holds a
 * row for (a private channel with protected history). Locked on MariaDB, so
 * a concurrent edit or deletion waits for the batch.
 */
export async function listTopicMessageIdsNewestFirst(
  q: Q,
  recipientId: number,
  topicKey: string,
  limit: number,
  onlyWithRowOf: number | null,
): Promise<number[]> {
  const qb = q('messages as m').where({ 'm.recipient_id': recipientId, 'm.topic_key': topicKey }).orderBy('m.id', 'desc').limit(limit);
  if (onlyWithRowOf !== null) qb.join('user_messages as um', 'um.message_id', 'm.id').where('um.user_id', onlyWithRowOf);
  if (dialectOf(q as Knex) === 'mysql') qb.forUpdate();
  const ids: unknown[] = await qb.pluck('m.id');
  return ids.map(Number);
}

/** The oldest message still sent to this recipient (a channel's first_message_id), or null. */
export async function getOldestMessageId(q: Q, realmId: number, recipientId: number): Promise<number | null> {
  const row = await q('messages').where({ realm_id: realmId, recipient_id: recipientId }).min('id as id').first();
  return row?.id == null ? null : Number(row.id);
}

export async function updateChannelFirstMessageId(q: Q, channelId: number, messageId: number | null): Promise<void> {
  await q('channels').where({ id: channelId }).update({ first_message_id: messageId });
  invalidates(q, { kind: 'channel', channelIds: [channelId] });
}

/** An archived message with what was archived with it. */
export interface ArchivedMessage {
  id: number;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  type: number;
  topic: string;
  content: string;
  rendered_content: string | null;
  date_sent: number;
  last_edit_time: number | null;
  last_moved_time: number | null;
  archived_at: number;
  archive_type: number;
  /** [user_id, flags] for every recipient row the message had, by user id. */
  user_messages: Array<[number, number]>;
  reactions: Array<{ id: number; user_id: number; emoji_name: string; emoji_code: string; reaction_type: string }>;
  edits: Array<{
    id: number;
    user_id: number | null;
    timestamp: number;
    prev_content: string | null;
    prev_topic: string | null;
    topic: string | null;
  }>;
  attachment_ids: number[];
}

/** archived_messages as stored: the recipients' rows are JSON text. */
type ArchivedMessageRow = Omit<ArchivedMessage, 'user_messages' | 'reactions' | 'edits' | 'attachment_ids'> & { user_messages: string };
type ArchivedReactionRow = ArchivedMessage['reactions'][number] & { message_id: number };
type ArchivedEditRow = ArchivedMessage['edits'][number] & { message_id: number };
interface ArchivedAttachmentLinkRow {
  attachment_id: number;
  message_id: number;
}

/** The archived messages among these ids (four statements), in id order. */
export async function getArchivedMessages(q: Q, ids: readonly number[]): Promise<ArchivedMessage[]> {
  if (ids.length === 0) return [];
  const slice = [...ids];
  const [messages, reactions, edits, links] = await Promise.all([
    q('archived_messages').whereIn('id', slice).orderBy('id'),
    q('archived_reactions').whereIn('message_id', slice).orderBy('id'),
    q('archived_message_edits').whereIn('message_id', slice).orderBy('id'),
    q('archived_attachment_messages').whereIn('message_id', slice).orderBy('attachment_id'),
  ]);
  const num = (v: unknown) => (v == null ? null : Number(v));
  return rawRows<ArchivedMessageRow>(messages).map((m) => {
    const id = Number(m.id);
    const parsed = JSON.parse(String(m.user_messages)) as Array<[number | string, number | string]>;
    return {
      id,
      realm_id: Number(m.realm_id),
      sender_id: Number(m.sender_id),
      recipient_id: Number(m.recipient_id),
      type: Number(m.type),
      topic: String(m.topic),
      content: String(m.content),
      rendered_content: m.rendered_content == null ? null : String(m.rendered_content),
      date_sent: Number(m.date_sent),
      last_edit_time: num(m.last_edit_time),
      last_moved_time: num(m.last_moved_time),
      archived_at: Number(m.archived_at),
      archive_type: Number(m.archive_type),
      user_messages: parsed.map(([u, f]): [number, number] => [Number(u), Number(f)]).sort((a, b) => a[0] - b[0]),
      reactions: rawRows<ArchivedReactionRow>(reactions)
        .filter((r) => Number(r.message_id) === id)
        .map((r) => ({
          id: Number(r.id),
          user_id: Number(r.user_id),
          emoji_name: String(r.emoji_name),
          emoji_code: String(r.emoji_code),
          reaction_type: String(r.reaction_type),
        })),
      edits: rawRows<ArchivedEditRow>(edits)
        .filter((e) => Number(e.message_id) === id)
        .map((e) => ({
          id: Number(e.id),
          user_id: num(e.user_id),
          timestamp: Number(e.timestamp),
          prev_content: e.prev_content == null ? null : String(e.prev_content),
          prev_topic: e.prev_topic == null ? null : String(e.prev_topic),
          topic: e.topic == null ? null : String(e.topic),
        })),
      attachment_ids: rawRows<ArchivedAttachmentLinkRow>(links)
        .filter((l) => Number(l.message_id) === id)
        .map((l) => Number(l.attachment_id)),
    };
  });
}
