import type { Knex } from 'knex';
import type { Tx } from '../db/transaction';
import { ArchiveType } from '../queries/archive';
import {
  archivedMessageGone,
  archiveTransactionGone,
  deleteArchivedMessages,
  deleteEmptyArchiveTransactions,
  listArchivedIdsOfTransactions,
  listExpiredArchivedIdsWithoutTransaction,
  listExpiredArchiveTransactions,
  listVacuumRealmIds,
} from '../queries/archive-vacuum';

/**
 * The archive's grace period (Zulip's clean_archived_data): archived
 * messages are restorable for ARCHIVED_DATA_VACUUM_DAYS after their
 * archiving, then deleted for good with their archive transaction. The
 * retention archiver's run (src/actions/retention.ts) vacuums after it
 * archives, under the same lease, batch by batch:
 * - a batch is one transaction deleting at most `limit` archived messages
 *   (with everything archived with them) of at most `limit` expired archive
 *   transactions of one organization and type, and the transactions left
 *   empty; a transaction holding more messages takes several batches;
 * - a crash between batches leaves a transaction partly deleted, but it is
 *   past its grace period, which the restore commands refuse
 *   (src/actions/archive-restore.ts), and the next run finishes it;
 * - messages archived before archive transactions existed (migration 030)
 *   go by their own archived_at, in a last scope.
 * Nothing is sent to clients: archived messages are already gone for them.
 * Uploads stay; those no message links any more (live or archived) are the
 * unclaimed-upload sweep's (src/actions/uploads.ts).
 */

/** What one vacuum batch works through: one organization's archive transactions of one type, or the messages archived without one. */
export type VacuumScope = { realmId: number; type: number } | { withoutTransaction: true };

export interface VacuumBatch {
  /** Rows the batch read: when fewer than a full batch of each, the scope is done. */
  done: boolean;
  /** Archived messages deleted. */
  messages: number;
  /** Archive transactions deleted. */
  transactions: number;
}

/** Every scope a run goes through, in order: each organization, each archive type, then the messages without a transaction. */
export async function listVacuumScopes(db: Knex): Promise<VacuumScope[]> {
  const scopes: VacuumScope[] = [];
  for (const realmId of await listVacuumRealmIds(db))
    for (const type of [ArchiveType.RETENTION_POLICY, ArchiveType.MANUAL]) scopes.push({ realmId, type });
  scopes.push({ withoutTransaction: true });
  return scopes;
}

/** The cutoff for a run at `nowSeconds`: what was archived before it is past the grace period. */
export function vacuumCutoff(nowSeconds: number, vacuumDays: number): number {
  return nowSeconds - vacuumDays * 86_400;
}

/** One batch of the scope, in the caller's transaction (the caller holds the lease in it). */
export async function vacuumBatchInTx(tx: Tx, scope: VacuumScope, before: number, limit: number): Promise<VacuumBatch> {
  let transactionIds: number[] = [];
  let ids: number[];
  if ('withoutTransaction' in scope) {
    ids = await listExpiredArchivedIdsWithoutTransaction(tx.trx, before, limit);
  } else {
    transactionIds = await listExpiredArchiveTransactions(tx.trx, scope.realmId, scope.type, before, limit);
    ids = await listArchivedIdsOfTransactions(tx.trx, transactionIds, limit);
  }
  if (transactionIds.length === 0 && ids.length === 0) return { done: true, messages: 0, transactions: 0 };
  const messages = await deleteArchivedMessages(tx.trx, ids);
  const transactions = await deleteEmptyArchiveTransactions(tx.trx, transactionIds);
  // Should COMMIT's answer be lost: the batch's first row gone says it committed
  // (only a vacuum deletes what is past the grace period).
  const first = ids[0];
  if (first !== undefined) tx.witness((db) => archivedMessageGone(db, first));
  else tx.witness((db) => archiveTransactionGone(db, transactionIds[0]!));
  return { done: transactionIds.length < limit && ids.length < limit, messages, transactions };
}
