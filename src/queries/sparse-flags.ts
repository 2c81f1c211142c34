import type { Knex } from 'knex';
import { holdWrite } from '../db/held-writes';
import { SPARSE_FLAGS, SparseFlag, sparseFlagsTouchedBy } from '../domain/sparse-flags';
import type { NewId } from './ids';
import { eachReceiverBlock, userIdsIn } from './message-receivers';

type Q = Knex | Knex.Transaction;

/**
 * The side tables of the sparse flags (src/domain/sparse-flags.ts): a row
 * (user_id, message_id) for each user_messages row that has the flag. Every
 * statement that writes flags keeps them (below); deleting a user_messages
 * row deletes its side rows (ON DELETE CASCADE, migration 022).
 */

/** 1,000 ids a statement, as updateUserMessageFlags. */
const CHUNK = 1000;

/** Side rows for new user_messages rows of one message, from their flags: one INSERT per table that gets any (none for most sends). */
export async function insertSparseFlagRows(q: Q, messageId: NewId, rows: ReadonlyArray<{ userId: number; flags: number }>): Promise<void> {
  for (const f of SPARSE_FLAGS) {
    const users = rows.filter((r) => (r.flags & f.mask) !== 0).map((r) => r.userId);
    for (let i = 0; i < users.length; i += 500) {
      const slice = users.slice(i, i + 500);
      // A plain VALUES list, as insertUserMessages (knex writes SQLite's as a
      // compound SELECT); held for the next packet on MySQL, as those rows are.
      await holdWrite(q, (ids) => {
        const message = ids.sql(messageId);
        const bound = ids.bindings(messageId);
        return {
          sql: `INSERT INTO ${f.table} (user_id, message_id) VALUES ${slice.map(() => `(?, ${message})`).join(', ')}`,
          bindings: slice.flatMap((u) => [u, ...bound]),
        };
      });
    }
  }
}

/** Side rows for new rows of one user (history they act on), all with the same flags. */
export async function insertSparseFlagRowsOfUser(q: Q, userId: number, messageIds: readonly number[], flags: number): Promise<void> {
  for (const f of sparseFlagsTouchedBy(flags)) {
    for (let i = 0; i < messageIds.length; i += 500) {
      const slice = messageIds.slice(i, i + 500);
      await q.raw(
        `INSERT INTO ${f.table} (user_id, message_id) VALUES ${slice.map(() => '(?, ?)').join(', ')}`,
        slice.flatMap((m) => [userId, m]),
      );
    }
  }
}

/**
 * After the bits in `mask` changed on a user's rows of these messages:
 * rewrites those rows' side rows of every flag the bits belong to from the
 * flags now stored (delete, then insert the rows that have the flag).
 */
export async function syncSparseFlagsOfUser(q: Q, userId: number, messageIds: readonly number[], mask: number): Promise<void> {
  for (const f of sparseFlagsTouchedBy(mask)) {
    for (let i = 0; i < messageIds.length; i += CHUNK) {
      const slice = messageIds.slice(i, i + CHUNK);
      await q(f.table).where('user_id', userId).whereIn('message_id', slice).del();
      await copyFlagged(q, f, (b) => b.where('um.user_id', userId).whereIn('um.message_id', slice));
    }
  }
}

/** The same after the bits in `mask` changed on these users' rows of one message (a message edit's mentions). */
export async function syncSparseFlagsOfMessage(q: Q, messageId: number, userIds: readonly number[], mask: number): Promise<void> {
  for (const f of sparseFlagsTouchedBy(mask)) {
    for (let i = 0; i < userIds.length; i += CHUNK) {
      const slice = userIds.slice(i, i + CHUNK);
      await q(f.table).where('message_id', messageId).whereIn('user_id', slice).del();
      await copyFlagged(q, f, (b) => b.where('um.message_id', messageId).whereIn('um.user_id', slice));
    }
  }
}

/** Side rows of every flag for all the user_messages rows of these messages (rows put back from the archive). */
export async function insertSparseFlagRowsOfMessages(q: Q, messageIds: readonly number[]): Promise<void> {
  // Found by primary key through the messages' receiver lists (ADR 0059).
  await eachReceiverBlock(q, messageIds, async (users, msgs) => {
    for (const f of SPARSE_FLAGS) await copyFlagged(q, f, (b) => b.whereRaw(userIdsIn('um.user_id', users)).whereIn('um.message_id', msgs));
  });
}

/** INSERT … SELECT of the user_messages rows `where` picks that have the flag. */
async function copyFlagged(q: Q, f: SparseFlag, where: (b: Knex.QueryBuilder) => Knex.QueryBuilder): Promise<void> {
  const select = where(q('user_messages as um').whereRaw('(um.flags & ?) <> 0', [f.mask])).select('um.user_id', 'um.message_id');
  await q.into(q.raw('?? (user_id, message_id)', [f.table])).insert(select);
}
