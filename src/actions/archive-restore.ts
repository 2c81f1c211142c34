import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import type { Progress } from '../db/backup/progress';
import {
  ArchiveTransactionRow,
  listArchivedIdsOfTransaction,
  listArchiveTransactions,
  lowerFirstMessageIds,
  restoreArchivedMessages,
  settleArchiveTransaction,
} from '../queries/archive-restore';
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

/** The batches a selection would restore, oldest first, with how many of their messages it would bring back. */
export async function listRestorable(ctx: Pick<AppContext, 'db'>, sel: RestoreSelection): Promise<ArchiveTransactionRow[]> {
  return listArchiveTransactions(ctx.db, {
    realmId: sel.realmId,
    id: sel.transactionId,
    type: sel.type,
    since: sel.since,
    recipientId: sel.recipientId,
  });
}

/** Restores the selected batches; `progress` hears each one. Returns the batches and messages restored. */
export async function doRestoreArchived(
  ctx: Pick<AppContext, 'db' | 'bus' | 'clock'>,
  sel: RestoreSelection,
  progress?: Pick<Progress, 'advance'>,
): Promise<{ transactions: number; messages: number }> {
  const batches = await listRestorable(ctx, sel);
  const total = batches.reduce((n, b) => n + b.messages, 0);
  let messages = 0;
  for (const batch of batches) {
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
  return { transactions: batches.length, messages };
}
