import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { invalidates } from '../db/invalidations';
import { messageSearchTerms } from '../domain/search';
import { ARCHIVE_CHUNK, ARCHIVED_CHILD_TABLES, marks, MESSAGE_COLUMNS, quoted } from './archive';
import { insertRows } from './ids';
import { addReceiversOfRows } from './message-receivers';
import { rawRows } from './rows';
import { insertSearchRows } from './search-index';
import { insertSparseFlagRowsOfMessages } from './sparse-flags';
import { listTopicsOfMessages, refreshTopicSummaries } from './topic-summaries';
import { insertUnreadRowsOfMessages } from './unread';

type Q = Knex | Knex.Transaction;

/**
 * Putting archived messages back (Zulip's restore_data_from_archive): the
 * reverse of archiveMessages (src/queries/archive.ts), for the admin CLI's
 * restore-archived. The archive holds everything a message had but what is
 * derived from it, which is rebuilt here: the topic key, the has_edit_history
 * and has_submessages markers, the sparse-flag and unread side rows, the
 * search terms.
 */

/** An archive transaction (a batch of archiving) with what of it is still in the archive. */
export interface ArchiveTransactionRow {
  id: number;
  realm_id: number;
  type: number;
  timestamp: number;
  restored: boolean;
  /** Its messages still archived (in the given channel, when one was named). */
  messages: number;
}

/** archive_transactions with the count of its archived messages, as the drivers answer (booleans 0/1, a count maybe a string). */
interface ArchiveTransactionDbRow {
  id: number;
  realm_id: number;
  type: number;
  timestamp: number;
  restored: number | boolean;
  messages: number | string;
}

/**
 * The unrestored archive transactions of an organization, oldest first, of
 * one type (or all), archived at or after `since` and before `before` (UNIX
 * seconds), holding messages of the channel `recipientId` when given; or
 * exactly the one `id`.
 */
export async function listArchiveTransactions(
  q: Q,
  f: { realmId?: number; id?: number; type?: number; since?: number; before?: number; recipientId?: number },
): Promise<ArchiveTransactionRow[]> {
  const qb = q('archive_transactions as t')
    .join('archived_messages as am', 'am.archive_transaction_id', 't.id')
    .where('t.restored', false)
    .groupBy('t.id', 't.realm_id', 't.type', 't.timestamp', 't.restored')
    .orderBy('t.id')
    .select('t.id', 't.realm_id', 't.type', 't.timestamp', 't.restored')
    .count('am.id as messages');
  if (f.id !== undefined) qb.where('t.id', f.id);
  if (f.realmId !== undefined) qb.where('t.realm_id', f.realmId);
  if (f.type !== undefined) qb.where('t.type', f.type);
  if (f.since !== undefined) qb.where('t.timestamp', '>=', f.since);
  if (f.before !== undefined) qb.where('t.timestamp', '<', f.before);
  if (f.recipientId !== undefined) qb.where('am.recipient_id', f.recipientId);
  return rawRows<ArchiveTransactionDbRow>(await qb).map((r) => ({
    id: Number(r.id),
    realm_id: Number(r.realm_id),
    type: Number(r.type),
    timestamp: Number(r.timestamp),
    restored: Boolean(Number(r.restored)),
    messages: Number(r.messages),
  }));
}

/** Whether the organization has this archive transaction (restored or not). */
export async function archiveTransactionExists(q: Q, realmId: number, id: number): Promise<boolean> {
  return (await q('archive_transactions').where({ id, realm_id: realmId }).first('id')) !== undefined;
}

/** The transaction's archived messages (of one channel when `recipientId` is given), by id. */
export async function listArchivedIdsOfTransaction(q: Q, transactionId: number, recipientId?: number): Promise<number[]> {
  const qb = q('archived_messages').where('archive_transaction_id', transactionId).orderBy('id');
  if (recipientId !== undefined) qb.where('recipient_id', recipientId);
  return ((await qb.pluck('id')) as unknown[]).map(Number);
}

/** Marks the transaction restored once none of its messages is left in the archive. */
export async function settleArchiveTransaction(q: Q, transactionId: number, at: number): Promise<void> {
  const left = await q('archived_messages').where('archive_transaction_id', transactionId).first('id');
  if (!left) await q('archive_transactions').where({ id: transactionId }).update({ restored: true, restored_at: at });
}

/** What restoring reads of an archived message itself (the rest is copied by statements). */
interface ArchivedToRestoreRow {
  id: number;
  realm_id: number;
  recipient_id: number;
  topic: string;
  content: string;
  /** [[user_id, flags], ...] as JSON text. */
  user_messages: string;
}

/**
 * Moves these archived messages back into the live tables with what was
 * archived with them, and out of the archive. Upload links come back only
 * for uploads that still exist. Returns the restored messages' recipients
 * (for the channels' first_message_id).
 */
export async function restoreArchivedMessages(
  q: Q,
  ids: readonly number[],
): Promise<Array<{ id: number; realm_id: number; recipient_id: number }>> {
  const mysql = dialectOf(q as Knex) === 'mysql';
  const ident = (sql: string) => (mysql ? sql.replace(/"/g, '`') : sql);
  const restored: Array<{ id: number; realm_id: number; recipient_id: number }> = [];
  for (let i = 0; i < ids.length; i += ARCHIVE_CHUNK) {
    const slice = ids.slice(i, i + ARCHIVE_CHUNK);
    const rows = rawRows<ArchivedToRestoreRow>(
      await q('archived_messages').whereIn('id', slice).select('id', 'realm_id', 'recipient_id', 'topic', 'content', 'user_messages'),
    );
    if (rows.length === 0) continue;
    const found = rows.map((r) => Number(r.id));
    const foundList = marks(found.length);
    await q.raw(
      ident(
        `INSERT INTO messages (${quoted(MESSAGE_COLUMNS)}, has_edit_history, has_submessages)
         SELECT ${quoted(MESSAGE_COLUMNS, 'am.')},
           CASE WHEN EXISTS (SELECT 1 FROM archived_message_edits e WHERE e.message_id = am.id) THEN 1 ELSE 0 END,
           CASE WHEN EXISTS (SELECT 1 FROM archived_submessages s WHERE s.message_id = am.id) THEN 1 ELSE 0 END
         FROM archived_messages am WHERE am.id IN (${foundList})`,
      ),
      found,
    );
    // The topic key is the lower-cased topic as JavaScript lower-cases it (SQLite's LOWER knows ASCII only).
    const byTopic = new Map<string, number[]>();
    for (const r of rows) {
      const topicIds = byTopic.get(String(r.topic));
      if (topicIds) topicIds.push(Number(r.id));
      else byTopic.set(String(r.topic), [Number(r.id)]);
    }
    for (const [topic, topicIds] of byTopic) {
      if (topic.toLowerCase() !== '') await q('messages').whereIn('id', topicIds).update({ topic_key: topic.toLowerCase() });
    }
    // Back in their topics' rows (a restored message may be a topic's newest, or its only one).
    await refreshTopicSummaries(q, await listTopicsOfMessages(q, found));

    const userRows: Array<{ user_id: number; message_id: number; flags: number }> = [];
    const userIds = new Set<number>();
    for (const r of rows) {
      for (const [u, flags] of JSON.parse(String(r.user_messages)) as Array<[number | string, number | string]>) {
        userRows.push({ user_id: Number(u), message_id: Number(r.id), flags: Number(flags) });
        userIds.add(Number(u));
      }
    }
    await insertRows(q, 'user_messages', userRows);
    await addReceiversOfRows(q, userRows);
    await insertSparseFlagRowsOfMessages(q, found);
    // Old ids, likely below their users' unread horizons: unread rows need their side rows (ADR 0024).
    await insertUnreadRowsOfMessages(q, found);

    for (const { live, archived, columns, restoreJoin } of ARCHIVED_CHILD_TABLES) {
      await q.raw(
        ident(
          `INSERT INTO ${live} (${quoted(columns)}) SELECT ${quoted(columns, 't.')} FROM ${archived} t ${restoreJoin ?? ''} WHERE t.message_id IN (${foundList})`,
        ),
        found,
      );
    }
    await insertSearchRows(
      q,
      rows.flatMap((r) => messageSearchTerms(String(r.topic), String(r.content)).map((t) => [t, Number(r.id)] as const)),
    );

    for (const { archived } of ARCHIVED_CHILD_TABLES) await q(archived).whereIn('message_id', found).del();
    await q('archived_messages').whereIn('id', found).del();
    invalidates(q, { kind: 'received', userIds: [...userIds] });
    for (const r of rows) restored.push({ id: Number(r.id), realm_id: Number(r.realm_id), recipient_id: Number(r.recipient_id) });
  }
  return restored;
}

interface ChannelFirstMessageRow {
  id: number;
  realm_id: number;
  recipient_id: number;
  first_message_id: number | null;
}

/**
 * Channels among these recipients whose oldest message is now older than
 * their recorded first_message_id (or which had none): the restored message
 * becomes it. Returns the channels changed.
 */
export async function lowerFirstMessageIds(q: Q, recipientIds: readonly number[]): Promise<number[]> {
  const changed: number[] = [];
  const channels = rawRows<ChannelFirstMessageRow>(
    await q('channels')
      .whereIn('recipient_id', [...recipientIds])
      .select('id', 'realm_id', 'recipient_id', 'first_message_id'),
  );
  for (const c of channels) {
    const row = await q('messages').where({ realm_id: c.realm_id, recipient_id: c.recipient_id }).min('id as id').first();
    const oldest = row?.id == null ? null : Number(row.id);
    if (oldest === null) continue;
    if (c.first_message_id == null || oldest < Number(c.first_message_id)) {
      await q('channels').where({ id: c.id }).update({ first_message_id: oldest });
      changed.push(Number(c.id));
    }
  }
  if (changed.length) invalidates(q, { kind: 'channel', channelIds: changed });
  return changed;
}
