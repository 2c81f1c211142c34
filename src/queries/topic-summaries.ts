import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { holdWrite, type NewId } from '../db/held-writes';
import { invalidates } from '../db/invalidations';
import { RecipientType } from '../domain/recipients';
import { rawRows } from './rows';

type Q = Knex | Knex.Transaction;

/**
 * channel_topics (migration 047, ADR 0055): per channel and topic, the
 * newest message's id and its spelling of the topic, so that a channel's
 * topic list is one ordered read of the (recipient_id, max_id) index, not a
 * grouping of every message of the channel. Every statement that adds,
 * moves or removes channel messages keeps it, in the same transaction:
 * - a send raises its topic's row (noteTopicSend);
 * - a move, a deletion (archiving) and a restore recompute the rows of the
 *   topics they touched from the messages (refreshTopicSummaries).
 */

export interface TopicSummaryRow {
  topic: string;
  max_id: number;
}

/** The row of every channel topic whose messages these are (read before they move or go). */
export interface TopicOfMessages {
  recipient_id: number;
  topic_key: string;
}

/**
 * A new channel message raises its topic's row, or creates it. Never lowers
 * it: on MariaDB two sends to one topic may commit in either order, and the
 * row keeps the larger id (and that message's spelling). Held with the send
 * (src/db/held-writes.ts): no round trip of its own.
 */
export async function noteTopicSend(q: Q, recipientId: number, topic: string, messageId: NewId): Promise<void> {
  const mysql = dialectOf(q as Knex) === 'mysql';
  await holdWrite(q, (ids) => ({
    sql: mysql
      ? // MariaDB assigns left to right: the spelling is compared with the old max_id.
        `INSERT INTO channel_topics (recipient_id, topic_key, topic, max_id) VALUES (?, ?, ?, ${ids.sql(messageId)})
         ON DUPLICATE KEY UPDATE topic = IF(VALUES(max_id) > max_id, VALUES(topic), topic), max_id = GREATEST(max_id, VALUES(max_id))`
      : `INSERT INTO channel_topics (recipient_id, topic_key, topic, max_id) VALUES (?, ?, ?, ${ids.sql(messageId)})
         ON CONFLICT (recipient_id, topic_key) DO UPDATE SET
           topic = CASE WHEN excluded.max_id > max_id THEN excluded.topic ELSE topic END, max_id = MAX(max_id, excluded.max_id)`,
    bindings: [recipientId, topic.toLowerCase(), topic, ...ids.bindings(messageId)],
  }));
  invalidates(q, { kind: 'topics', recipientIds: [recipientId] });
}

/** Ids a statement names at most: below SQLite's 32,766 bound variables, and a move of a whole topic in one read. */
const IDS_PER_READ = 30_000;

/** The channel topics these messages are in, each once: what a move or a deletion must refresh afterwards. */
export async function listTopicsOfMessages(q: Q, messageIds: readonly number[]): Promise<TopicOfMessages[]> {
  const out = new Map<string, TopicOfMessages>();
  for (let i = 0; i < messageIds.length; i += IDS_PER_READ) {
    const rows = rawRows<TopicOfMessages>(
      await q('messages as m')
        .join('recipients as r', 'r.id', 'm.recipient_id')
        .where('r.type', RecipientType.CHANNEL)
        .whereIn('m.id', messageIds.slice(i, i + IDS_PER_READ))
        .distinct('m.recipient_id', 'm.topic_key'),
    );
    for (const r of rows)
      out.set(`${r.recipient_id}\n${r.topic_key}`, { recipient_id: Number(r.recipient_id), topic_key: String(r.topic_key) });
  }
  return [...out.values()];
}

/**
 * These topics' rows made true again from their messages: the newest
 * message's id and spelling, or no row when none is left. Per channel, a
 * delete of the rows and one INSERT … SELECT from the (recipient_id,
 * topic_key, id) index; the insert's read of the messages locks what it
 * reads on MariaDB, so a send into one of these topics committing meanwhile
 * is waited for, not missed.
 */
export async function refreshTopicSummaries(q: Q, topics: readonly TopicOfMessages[]): Promise<void> {
  const byChannel = new Map<number, Set<string>>();
  for (const t of topics) {
    const keys = byChannel.get(t.recipient_id);
    if (keys) keys.add(t.topic_key);
    else byChannel.set(t.recipient_id, new Set([t.topic_key]));
  }
  if (byChannel.size) invalidates(q, { kind: 'topics', recipientIds: [...byChannel.keys()] });
  for (const [recipientId, keySet] of byChannel) {
    const allKeys = [...keySet];
    for (let i = 0; i < allKeys.length; i += 500) {
      const keys = allKeys.slice(i, i + 500);
      const list = keys.map(() => '?').join(', ');
      await q('channel_topics').where('recipient_id', recipientId).whereIn('topic_key', keys).del();
      await q.raw(
        `INSERT INTO channel_topics (recipient_id, topic_key, topic, max_id)
         SELECT m.recipient_id, m.topic_key, m.topic, m.id FROM messages m
         JOIN (SELECT MAX(id) AS max_id FROM messages WHERE recipient_id = ? AND topic_key IN (${list}) GROUP BY topic_key) t
           ON m.id = t.max_id`,
        [recipientId, ...keys],
      );
    }
  }
}

/** A channel's topics, newest first, from its rows: one read of the (recipient_id, max_id) index. */
export async function listTopicSummaries(q: Q, recipientId: number): Promise<TopicSummaryRow[]> {
  const rows = rawRows<{ topic: string; max_id: number | string }>(
    await q('channel_topics').where('recipient_id', recipientId).orderBy('max_id', 'desc').select('topic', 'max_id'),
  );
  return rows.map((r) => ({ topic: r.topic, max_id: Number(r.max_id) }));
}

/**
 * Every channel's rows made from the messages, as migration 047 first made
 * them: after a bulk load that wrote messages directly (bench/generate.ts).
 */
export async function rebuildAllTopicSummaries(q: Q): Promise<void> {
  invalidates(q, { kind: 'all' });
  await q('channel_topics').del();
  await q.raw(
    `INSERT INTO channel_topics (recipient_id, topic_key, topic, max_id)
     SELECT m.recipient_id, m.topic_key, m.topic, m.id
     FROM messages m
     JOIN (SELECT mm.recipient_id, mm.topic_key, MAX(mm.id) AS max_id
           FROM messages mm JOIN recipients r ON r.id = mm.recipient_id
           WHERE r.type = ?
           GROUP BY mm.recipient_id, mm.topic_key) t ON m.id = t.max_id`,
    [RecipientType.CHANNEL],
  );
}
