import type { Knex } from 'knex';
import { flagMask } from '../domain/flags';
import { dialectOf, insertIgnoreInto } from '../db/connection';
import { eachReceiverBlock, userIdsIn } from './message-receivers';

type Q = Knex | Knex.Transaction;

/**
 * Where a user's unread rows are found (docs/adr/0024-unread-without-a-write-per-receiver.md):
 * - above the user's horizon (`unread_horizons`, 0 without a row), by the
 *   user's primary-key range in user_messages: a send writes nothing else;
 * - at or below it, through `user_message_unread`, which holds a superset
 *   of them.
 * `user_messages.flags` decides in both places: a side row whose message was
 * read since is simply not unread. So a write that marks rows unread adds
 * their side rows wherever they are (a side row above the horizon is
 * harmless), and marking rows read may leave side rows behind (it deletes
 * them, to keep the table small). The one thing that must never happen is
 * an unread row at or below the horizon without a side row:
 * `advanceUnreadHorizon` (src/actions/unread-horizon.ts) is the only writer
 * of horizons, and it never moves one past a message a send may still be
 * committing.
 */
export const UNREAD_TABLE = 'user_message_unread';

/** The read bit: a row is unread when it is clear. */
export const READ = flagMask('read');

/** 1,000 ids a statement, as updateUserMessageFlags. */
const CHUNK = 1000;

/**
 * The user's side rows at or below `horizon` (aliased uu), each joined to its
 * user_messages row (aliased um), whose read bit decides; `uu.message_id`
 * walks the side table's key.
 */
export function sideRowsAtOrBelow(q: Q, userId: number, horizon: number): Knex.QueryBuilder {
  return q(`${UNREAD_TABLE} as uu`)
    .join('user_messages as um', function () {
      this.on('um.user_id', '=', 'uu.user_id').andOn('um.message_id', '=', 'uu.message_id');
    })
    .where('uu.user_id', userId)
    .where('uu.message_id', '<=', horizon);
}

/** The user's horizon: 0 when they have none (every row of theirs is above it). */
export async function getUnreadHorizon(q: Q, userId: number): Promise<number> {
  const row = await q('unread_horizons').where('user_id', userId).first('message_id');
  return row ? Number(row.message_id) : 0;
}

/** Whether the user has more than `bound` user_messages rows above `horizon` (reads at most bound + 1 index entries). */
export async function hasRowsAbove(q: Q, userId: number, horizon: number, bound: number): Promise<boolean> {
  const row = await q('user_messages')
    .where('user_id', userId)
    .where('message_id', '>', horizon)
    .orderBy('message_id', 'asc')
    .offset(bound)
    .first('message_id');
  return row !== undefined;
}

/**
 * The organization's newest message sent before `before` (seconds), or null:
 * one probe of the (realm_id, date_sent) index, whose entries end with the id.
 */
export async function findLastMessageSentBefore(q: Q, realmId: number, before: number): Promise<number | null> {
  const row = await q('messages')
    .where('realm_id', realmId)
    .where('date_sent', '<', before)
    .orderBy([
      { column: 'date_sent', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first('id');
  return row ? Number(row.id) : null;
}

/** Side rows for the user's unread rows in (from, to], those already there left alone. */
export async function copyUnreadRows(q: Q, userId: number, from: number, to: number): Promise<void> {
  // Side rows of marked-unread messages may already be there: skipped, not an error.
  await q.raw(
    `${insertIgnoreInto(q)} ${UNREAD_TABLE} (user_id, message_id)
     SELECT user_id, message_id FROM user_messages WHERE user_id = ? AND message_id > ? AND message_id <= ? AND (flags & ?) = 0`,
    [userId, from, to, READ],
  );
}

/** Moves the user's horizon up to `to` (never down: a concurrent advance may have gone further). */
export async function raiseUnreadHorizon(q: Q, userId: number, to: number): Promise<void> {
  if (dialectOf(q as Knex) === 'mysql') {
    await q.raw(
      'INSERT INTO unread_horizons (user_id, message_id) VALUES (?, ?) ON DUPLICATE KEY UPDATE message_id = GREATEST(message_id, VALUES(message_id))',
      [userId, to],
    );
    return;
  }
  await q.raw(
    'INSERT INTO unread_horizons (user_id, message_id) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET message_id = MAX(message_id, excluded.message_id)',
    [userId, to],
  );
}

/**
 * After the read bit was set (`add`) or cleared (`remove`) on a user's rows
 * of these messages: their side rows deleted, or added for those now unread
 * (wherever they are, see above; one already there is left alone).
 */
export async function syncUnreadRowsOfUser(q: Q, userId: number, messageIds: readonly number[], op: 'add' | 'remove'): Promise<void> {
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    const slice = messageIds.slice(i, i + CHUNK);
    if (op === 'add') {
      await q(UNREAD_TABLE).where('user_id', userId).whereIn('message_id', slice).del();
      continue;
    }
    await q.raw(
      `${insertIgnoreInto(q)} ${UNREAD_TABLE} (user_id, message_id)
       SELECT user_id, message_id FROM user_messages WHERE user_id = ? AND message_id IN (${slice.map(() => '?').join(', ')}) AND (flags & ?) = 0`,
      [userId, ...slice, READ],
    );
  }
}

/**
 * Side rows for the unread rows among every row of these messages (rows put
 * back from the archive, whose ids may lie below their users' horizons).
 */
export async function insertUnreadRowsOfMessages(q: Q, messageIds: readonly number[]): Promise<void> {
  // Found by primary key through the messages' receiver lists (ADR 0059).
  await eachReceiverBlock(q, messageIds, (users, msgs) =>
    q.raw(
      `${insertIgnoreInto(q)} ${UNREAD_TABLE} (user_id, message_id)
       SELECT user_id, message_id FROM user_messages WHERE ${userIdsIn('user_id', users)}
         AND message_id IN (${msgs.map(() => '?').join(', ')}) AND (flags & ?) = 0`,
      [...msgs, READ],
    ),
  );
}

/** The id of the `n`th of the user's rows above `from`, or `to` when there are fewer up to it. */
export async function findNthRowAbove(q: Q, userId: number, from: number, to: number, n: number): Promise<number> {
  const row = await q('user_messages')
    .where('user_id', userId)
    .where('message_id', '>', from)
    .where('message_id', '<=', to)
    .orderBy('message_id', 'asc')
    .offset(n - 1)
    .first('message_id');
  return row ? Number(row.message_id) : to;
}
