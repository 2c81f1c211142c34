import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { holdWrite, integerLiteral, type NewId } from '../db/held-writes';

type Q = Knex | Knex.Transaction;

/**
 * message_receivers (migration 049, ADR 0059): per message, the ids of the
 * users who may hold a user_messages row for it, as text ("3,17,42").
 *
 * It replaces the index of user_messages by message_id on MariaDB. A send
 * wrote one entry of that index per receiver; it now writes one row. The
 * list is a superset of the holders, never less:
 * - every statement that gives users rows of a message adds them here, in
 *   the same transaction (a send, a user's history rows or catch-up, a
 *   move's rows for the new channel's subscribers, a restore);
 * - nothing takes an id out when a row goes (a move's lost access): a stale
 *   id costs a primary-key probe that finds nothing;
 * - an id may be listed twice (a move back and forth).
 * So every reader confirms with the rows themselves, by primary key:
 * `eachReceiverBlock` hands it blocks of (users × messages) to query as
 * `user_id IN (…) AND message_id IN (…)`.
 */

/** Messages read per statement (found by key: MariaDB's join with a table of the ids is an eq_ref), and rows per upsert. */
const CHUNK = 1000;
/**
 * How a block of users × messages stays a primary-key probe per pair on
 * MariaDB, measured with EXPLAIN on 10.11:
 * - an IN list of 1,000 or more values becomes a join with a table of them
 *   (in_predicate_conversion_threshold): with both lists that long, or the
 *   users' list that long beside more than one message, MariaDB reads every
 *   row of each user named and filters the messages;
 * - past about 32,000 pairs (optimizer_max_sel_arg_weight) the range
 *   optimizer keeps the first key part only, with the same result.
 * A long list of users is fine beside one message (`message_id = ?`): each
 * user is then one eq_ref probe.
 */
const SHORT_LIST = 900;
export const PAIRS_PER_STATEMENT = 20_000;

const idList = (ids: readonly number[]) => ids.map(integerLiteral).join(',');

/**
 * A new message's row, with the users its send gives rows. Held with the
 * send (src/db/held-writes.ts): no round trip of its own.
 */
export async function holdReceiversOfNewMessage(q: Q, messageId: NewId, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  const list = idList(userIds);
  await holdWrite(q, (ids) => ({
    sql: `INSERT INTO message_receivers (message_id, user_ids) VALUES (${ids.sql(messageId)}, ?)`,
    bindings: [...ids.bindings(messageId), list],
  }));
}

/**
 * Adds these users to each of these messages' lists (creating a list where
 * there is none): one upsert per CHUNK messages, the list bound once (a
 * list of thousands of users a message, repeated per message, would pass
 * MariaDB's max_allowed_packet). Add only users given rows just now: a list
 * is never trimmed, so appending users who are listed already makes it grow
 * at every call.
 */
export async function addReceivers(q: Q, messageIds: readonly number[], userIds: readonly number[]): Promise<void> {
  if (messageIds.length === 0 || userIds.length === 0) return;
  const list = idList([...new Set(userIds)]);
  const mysql = dialectOf(q as Knex) === 'mysql';
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    const ids = idList(messageIds.slice(i, i + CHUNK));
    await q.raw(
      mysql
        ? `INSERT INTO message_receivers (message_id, user_ids) SELECT id, ? FROM messages WHERE id IN (${ids})
           ON DUPLICATE KEY UPDATE user_ids = CONCAT(message_receivers.user_ids, ',', VALUES(user_ids))`
        : `INSERT INTO message_receivers (message_id, user_ids) SELECT id, ? FROM messages WHERE id IN (${ids})
           ON CONFLICT (message_id) DO UPDATE SET user_ids = user_ids || ',' || excluded.user_ids`,
      [list],
    );
  }
}

/** Each message's list given (rows to be written back, as a restore has them): added as `addReceivers` does, grouped by list. */
export async function addReceiversOfRows(q: Q, rows: ReadonlyArray<{ user_id: number; message_id: number }>): Promise<void> {
  const byMessage = new Map<number, number[]>();
  for (const r of rows) {
    const users = byMessage.get(r.message_id);
    if (users) users.push(r.user_id);
    else byMessage.set(r.message_id, [r.user_id]);
  }
  const byList = new Map<string, { userIds: number[]; messageIds: number[] }>();
  for (const [messageId, users] of byMessage) {
    const userIds = [...new Set(users)].sort((a, b) => a - b);
    const key = userIds.join(',');
    const group = byList.get(key);
    if (group) group.messageIds.push(messageId);
    else byList.set(key, { userIds, messageIds: [messageId] });
  }
  for (const g of byList.values()) await addReceivers(q, g.messageIds, g.userIds);
}

/**
 * Calls `each` with a chunk of these messages and their lists (a message
 * without a list has none in the map). Locked on MariaDB: a locking read
 * sees the newest lists, not the transaction's snapshot (a message archived
 * and restored since then lost its list), and holds them until the caller
 * has appended what they lack.
 */
async function eachListLocked(
  q: Q,
  messageIds: readonly number[],
  each: (messageIds: number[], listed: Map<number, Set<number>>) => Promise<void>,
): Promise<void> {
  const mysql = dialectOf(q as Knex) === 'mysql';
  const unique = [...new Set(messageIds)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const chunk = unique.slice(i, i + CHUNK);
    const read = q('message_receivers').whereIn('message_id', chunk).select('message_id', 'user_ids');
    if (mysql) read.forUpdate();
    const listed = new Map<number, Set<number>>();
    for (const r of (await read) as Array<{ message_id: number | string; user_ids: string }>)
      listed.set(Number(r.message_id), new Set(parseList(String(r.user_ids))));
    await each(chunk, listed);
  }
}

/**
 * As addReceiversOfRows, leaving out the users a message lists already: a
 * user whose row went (a move out of their reach) and comes back (a move
 * back) is listed still, and listing them again would grow the list at
 * every round.
 */
export async function addUnlistedReceiversOfRows(q: Q, rows: ReadonlyArray<{ user_id: number; message_id: number }>): Promise<void> {
  const byMessage = new Map<number, Set<number>>();
  for (const r of rows) {
    const users = byMessage.get(r.message_id);
    if (users) users.add(r.user_id);
    else byMessage.set(r.message_id, new Set([r.user_id]));
  }
  const sorted = new Map<number, number[]>();
  for (const [id, users] of byMessage)
    sorted.set(
      id,
      [...users].sort((x, y) => x - y),
    );
  await addUnlisted(q, [...sorted.keys()], (id) => sorted.get(id)!);
}

/**
 * Lists `userIds` for each of these messages that does not list them yet:
 * the users a caller is about to give rows (a move's read rows for a
 * channel's subscribers).
 */
export async function addUnlistedReceivers(q: Q, messageIds: readonly number[], userIds: readonly number[]): Promise<void> {
  const users = [...new Set(userIds)].sort((x, y) => x - y);
  if (users.length > 0) await addUnlisted(q, messageIds, () => users);
}

/**
 * Appends to each message's list the users of `usersOf(message)` (unique,
 * in ascending order) it does not list yet. The messages that lack the same
 * users share a statement; a chunk of messages at a time, so a big move
 * never holds all its lists at once.
 */
async function addUnlisted(q: Q, messageIds: readonly number[], usersOf: (messageId: number) => readonly number[]): Promise<void> {
  await eachListLocked(q, messageIds, async (chunk, lists) => {
    const groups = new Map<string, { userIds: number[]; messageIds: number[] }>();
    for (const id of chunk) {
      const listed = lists.get(id);
      const missing = listed ? usersOf(id).filter((u) => !listed.has(u)) : [...usersOf(id)];
      if (missing.length === 0) continue;
      const key = missing.join(',');
      const group = groups.get(key);
      if (group) group.messageIds.push(id);
      else groups.set(key, { userIds: missing, messageIds: [id] });
    }
    for (const g of groups.values()) await addReceivers(q, g.messageIds, g.userIds);
  });
}

/** Drops these messages' lists (their messages leave: archiving). */
export async function deleteReceiversOf(q: Q, messageIds: readonly number[]): Promise<void> {
  for (let i = 0; i < messageIds.length; i += CHUNK)
    await q('message_receivers')
      .whereIn('message_id', messageIds.slice(i, i + CHUNK))
      .del();
}

/**
 * Runs `run` on blocks of (users × messages), each small enough to be read
 * by primary-key probes (PAIRS_PER_STATEMENT), that together cover every
 * pair of these users and messages.
 */
export async function eachPairBlock(
  userIds: readonly number[],
  messageIds: readonly number[],
  run: (userIds: number[], messageIds: number[]) => Promise<unknown>,
): Promise<void> {
  if (userIds.length === 0 || messageIds.length === 0) return;
  if (userIds.length > SHORT_LIST) {
    // A message at a time, its users in lists of PAIRS_PER_STATEMENT.
    for (const m of messageIds) {
      for (let u = 0; u < userIds.length; u += PAIRS_PER_STATEMENT) await run(userIds.slice(u, u + PAIRS_PER_STATEMENT), [m]);
    }
    return;
  }
  const perBlock = Math.max(1, Math.min(SHORT_LIST, Math.floor(PAIRS_PER_STATEMENT / userIds.length)));
  for (let m = 0; m < messageIds.length; m += perBlock) await run([...userIds], messageIds.slice(m, m + perBlock));
}

/**
 * Blocks that cover every user_messages row of these messages: each is
 * users × messages whose messages share one list (a channel's messages
 * mostly do), within PAIRS_PER_STATEMENT. Query a block as `user_id IN
 * (users) AND message_id IN (messages)`: primary-key probes, on both
 * databases. The lists are supersets (see above), so a block may name users
 * without a row. With `among`, only those users' rows.
 */
export async function listReceiverBlocks(
  q: Q,
  messageIds: readonly number[],
  among?: ReadonlySet<number>,
): Promise<Array<[userIds: number[], messageIds: number[]]>> {
  // Grouped over all the messages, not per statement that reads the lists: fewer, fuller blocks.
  // Each message once: a message in two blocks would have its rows read twice.
  const unique = [...new Set(messageIds)];
  const groups = new Map<string, { userIds: number[]; messageIds: number[] }>();
  for (let i = 0; i < unique.length; i += CHUNK) {
    const rows: Array<{ message_id: number | string; user_ids: string }> = await q('message_receivers')
      .whereIn('message_id', unique.slice(i, i + CHUNK))
      .select('message_id', 'user_ids');
    for (const r of rows) {
      let userIds = parseList(String(r.user_ids));
      if (among) userIds = userIds.filter((id) => among.has(id));
      const key = userIds.join(',');
      const group = groups.get(key);
      if (group) group.messageIds.push(Number(r.message_id));
      else groups.set(key, { userIds, messageIds: [Number(r.message_id)] });
    }
  }
  const blocks: Array<[number[], number[]]> = [];
  for (const g of groups.values()) {
    await eachPairBlock(g.userIds, g.messageIds, (users, msgs) => {
      blocks.push([users, msgs]);
      return Promise.resolve();
    });
  }
  return blocks;
}

/** Runs `run` on each of `listReceiverBlocks`' blocks, in turn. */
export async function eachReceiverBlock(
  q: Q,
  messageIds: readonly number[],
  run: (userIds: number[], messageIds: number[]) => Promise<unknown>,
  among?: ReadonlySet<number>,
): Promise<void> {
  for (const [users, msgs] of await listReceiverBlocks(q, messageIds, among)) await run(users, msgs);
}

/** Which of these users × messages pairs have a row (`user:message`), by primary-key probes. */
export async function listExistingPairs(q: Q, userIds: readonly number[], messageIds: readonly number[]): Promise<Set<string>> {
  const found = new Set<string>();
  await eachPairBlock([...new Set(userIds)], [...new Set(messageIds)], async (users, msgs) => {
    const rows: Array<{ user_id: number | string; message_id: number | string }> = await q('user_messages')
      .whereRaw(userIdsIn('user_id', users))
      .whereIn('message_id', msgs)
      .select('user_id', 'message_id');
    for (const r of rows) found.add(`${r.user_id}:${r.message_id}`);
  });
  return found;
}

/** Users holding a row for any of these messages, ascending. */
export async function listHolderIds(q: Q, messageIds: readonly number[]): Promise<number[]> {
  const out = new Set<number>();
  await eachReceiverBlock(q, messageIds, async (users, msgs) => {
    const found: unknown[] = await q('user_messages')
      .whereRaw(`user_id IN (${idList(users)})`)
      .whereIn('message_id', msgs)
      .distinct('user_id')
      .pluck('user_id');
    for (const id of found) out.add(Number(id));
  });
  return [...out].sort((a, b) => a - b);
}

/** Every row of one message: holder and flags. */
export async function listRowsOfMessage(q: Q, messageId: number): Promise<Array<{ user_id: number; flags: number }>> {
  const out: Array<{ user_id: number; flags: number }> = [];
  await eachReceiverBlock(q, [messageId], async (users) => {
    const rows: Array<{ user_id: number | string; flags: number | string }> = await q('user_messages')
      .whereRaw(`user_id IN (${idList(users)})`)
      .where('message_id', messageId)
      .select('user_id', 'flags');
    for (const r of rows) out.push({ user_id: Number(r.user_id), flags: Number(r.flags) });
  });
  return out;
}

/** `user_id IN (…)` of a block, as SQL text (integer literals, checked): for readers that build their own statement. */
export const userIdsIn = (column: string, userIds: readonly number[]) => `${column} IN (${idList(userIds)})`;

/** A list's ids, each once, ascending. */
function parseList(text: string): number[] {
  const ids = new Set<number>();
  for (const part of text.split(',')) if (part !== '') ids.add(Number(part));
  return [...ids].sort((a, b) => a - b);
}
