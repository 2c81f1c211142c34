import type { Knex } from 'knex';
import { collectInvalidations, publishInvalidations } from './invalidations';

/**
 * A transaction with an after-commit list. Actions queue events (and any
 * other side effect that must not happen for a rolled-back change) with
 * `afterCommit`; they run only once the transaction has committed.
 */
export interface Tx {
  trx: Knex.Transaction;
  afterCommit(fn: () => void): void;
}

/**
 * Errors after which the whole transaction may simply run again:
 * - an InnoDB deadlock (it kills one of the transactions in a lock cycle);
 * - a duplicate key: actions check before they insert, and two concurrent
 *   transactions can both pass the check (InnoDB's consistent reads do not
 *   lock). Run again, the work sees the committed row and takes its
 *   "already exists" path (the existing DM conversation, "Reaction already
 *   exists.", CHANNEL_ALREADY_EXISTS, ...).
 */
const MAX_ATTEMPTS = 4;
const isRetryable = (err: unknown) => {
  const e = err as { code?: string; errno?: number };
  return e?.errno === 1213 || e?.errno === 1062 || e?.code === 'SQLITE_BUSY';
};

export async function inTransaction<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const pending: Array<() => void> = [];
    let invalidations: ReturnType<typeof collectInvalidations> = [];
    let result: T;
    try {
      result = await db.transaction(async (trx) => {
        invalidations = collectInvalidations(trx);
        return work({ trx, afterCommit: (fn) => pending.push(fn) });
      });
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !isRetryable(err)) throw err;
      // Back off a little, with jitter, so the competing transactions do not collide again.
      await new Promise((r) => setTimeout(r, attempt * 5 + Math.random() * 10));
      continue;
    }
    // Committed: the hooks run outside the retry, since whatever they throw,
    // running the work again would store it a second time (a sent message twice).
    // Cache invalidations first (src/db/invalidations.ts): no event announces a
    // change while a cache still holds the value before it.
    publishInvalidations(db, invalidations);
    for (const fn of pending) fn();
    return result;
  }
}
