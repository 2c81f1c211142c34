import type { Knex } from 'knex';

/**
 * A transaction with an after-commit list. Actions queue events (and any
 * other side effect that must not happen for a rolled-back change) with
 * `afterCommit`; they run only once the transaction has committed.
 */
export interface Tx {
  trx: Knex.Transaction;
  afterCommit(fn: () => void): void;
}

export async function inTransaction<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T> {
  const pending: Array<() => void> = [];
  const result = await db.transaction(async (trx) =>
    work({ trx, afterCommit: (fn) => pending.push(fn) }),
  );
  for (const fn of pending) fn();
  return result;
}
