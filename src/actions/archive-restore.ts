import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import type { Progress } from '../db/backup/progress';
import {
  archiveTransactionExists,
  ArchiveTransactionRow,
  listArchivedIdsOfTransaction,
  listArchiveTransactions,
  lowerFirstMessageIds,
  restoreArchivedMessages,
  settleArchiveTransaction,
} from '../queries/archive-restore';
import { vacuumCutoff } from './archive-vacuum';
import { invalidateMessagesAfterCommit } from './message-invalidation';

/**
 * Undoing archiving (Zulip's restore_data_from_archive and
 * restore_retention_policy_deletions_for_stream), for the admin CLI: archive
 * transactions are restored one at a time, each in one transaction, so an
 * interrupted restore leaves every batch either archived or live whole and
 * can simply be run again. Restored messages are as they were: their
 * recipients' rows and flags, reactions, edit history, submessages, upload
 * links (for uploads that still exist), search terms; a channel whose
 * recorded first message is newer gets the restored one.
 *
 * Clients are not told (Zulip sends nothing either): a client that reloads,
 * or fetches the messages, sees them. Archiving runs again on its schedule,
 * so messages restored while their retention period still covers them are
 * archived again by the next run: change the period first.
 *
 * Only within the grace period: a batch archived ARCHIVED_DATA_VACUUM_DAYS
 * ago or more is the vacuum's (src/actions/archive-vacuum.ts), deleted or
 * being deleted, and is never restored, even in part.
 */

export interface RestoreSelection {
  realmId: number;
  /** Only the messages of this channel (by its recipient). */
  recipientId?: number;
  /** Only batches archived at or after this time (UNIX seconds). */
  since?: number;
  /** Only this archive transaction. */
  transactionId?: number;
  /** Only batches of this ArchiveType (restore-retention: RETENTION_POLICY). */
  type?: number;
}

/** What a restore did, and what of its selection it could not restore. */
export interface RestoreResult {
  transactions: number;
  messages: number;
  /** UNIX seconds: batches archived before this are past the grace period. */
  cutoff: number;
  /** Selected batches past the grace period, not restored (the vacuum deletes them). */
  expired: ArchiveTransactionRow[];
  /** With `transactionId`: whether the organization has that archive transaction at all (it may be restored already, or vacuumed). */
  transactionExists?: boolean;
}

/** The archiving time before which a batch is past the grace period, now. */
export function restoreCutoff(ctx: Pick<AppContext, 'clock' | 'config'>): number {
  return vacuumCutoff(Math.floor(ctx.clock.now() / 1000), ctx.config.archivedDataVacuumDays);
}

/**
 * The batches a selection would restore, oldest first, with how many of
 * their messages it would bring back: those archived at or after `cutoff`.
 */
export async function listRestorable(ctx: Pick<AppContext, 'db'>, sel: RestoreSelection, cutoff: number): Promise<ArchiveTransactionRow[]> {
  return listArchiveTransactions(ctx.db, {
    realmId: sel.realmId,
    id: sel.transactionId,
    type: sel.type,
    since: Math.max(sel.since ?? cutoff, cutoff),
    recipientId: sel.recipientId,
  });
}

/**
 * Restores the selected batches within the grace period; `progress` hears
 * each one. Returns the batches and messages restored, and the selected
 * batches it left because they are past the grace period.
 */
export async function doRestoreArchived(
  ctx: Pick<AppContext, 'db' | 'bus' | 'clock' | 'config'>,
  sel: RestoreSelection,
  progress?: Pick<Progress, 'advance'>,
): Promise<RestoreResult> {
  const cutoff = restoreCutoff(ctx);
  const batches = await listRestorable(ctx, sel, cutoff);
  const expired =
    sel.since !== undefined && sel.since >= cutoff
      ? []
      : await listArchiveTransactions(ctx.db, {
          realmId: sel.realmId,
          id: sel.transactionId,
          type: sel.type,
          since: sel.since,
          before: cutoff,
          recipientId: sel.recipientId,
        });
  const total = batches.reduce((n, b) => n + b.messages, 0);
  let messages = 0;
  let transactions = 0;
  for (const batch of batches) {
    // A long restore may reach a batch once its grace period is over: the
    // vacuum may have begun on it, and half a batch is never put back.
    if (batch.timestamp < restoreCutoff(ctx)) {
      expired.push(batch);
      continue;
    }
    transactions += 1;
    messages += await inTransaction(ctx.db, async (tx) => {
      const ids = await listArchivedIdsOfTransaction(tx.trx, batch.id, sel.recipientId);
      const restored = await restoreArchivedMessages(tx.trx, ids);
      await lowerFirstMessageIds(tx.trx, [...new Set(restored.map((r) => r.recipient_id))]);
      await settleArchiveTransaction(tx.trx, batch.id, Math.floor(ctx.clock.now() / 1000));
      // No process holds these ids' dicts (they were archived), unless one was restored and archived before.
      invalidateMessagesAfterCommit(tx, ctx.bus, () => restored.map((r) => r.id));
      return restored.length;
    });
    progress?.advance(messages, total, 'messages');
  }
  const result: RestoreResult = { transactions, messages, cutoff, expired };
  if (sel.transactionId !== undefined && transactions === 0 && expired.length === 0)
    result.transactionExists = await archiveTransactionExists(ctx.db, sel.realmId, sel.transactionId);
  return result;
}
