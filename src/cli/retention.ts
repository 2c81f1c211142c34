import { doRestoreArchived, RestoreSelection } from '../actions/archive-restore';
import { retentionHolder, runRetention } from '../actions/retention';
import type { AppContext } from '../context';
import { ApiError } from '../errors';
import { ArchiveType } from '../queries/archive';
import { getChannelByName } from '../queries/channels';
import { getRealmByStringId } from '../queries/realms';
import { stderrProgress } from './progress';

export const RETENTION_USAGE = `  archive-expired                          archive the messages past their retention period now, and
                                           delete archived messages past ARCHIVED_DATA_VACUUM_DAYS, as
                                           the servers do every RETENTION_INTERVAL_MS (skipped while
                                           another process is archiving)
  restore-retention [--realm ID] [--channel NAME] [--since TIME]
                                           put back what the retention policy archived (in a
                                           channel, archived since TIME: an ISO date or UNIX seconds);
                                           change message_retention_days first, or the next run
                                           archives them again
  restore-archived --transaction N [--realm ID]
                                           put back one archive transaction (a retention batch or a
                                           deletion), by its number
                                           (both only within ARCHIVED_DATA_VACUUM_DAYS of the archiving:
                                           the archiver deletes what is older for good)`;

export interface RetentionCliOptions {
  realm: string;
  channel?: string;
  since?: string;
  transaction?: string;
}

/** `archive-expired`: one run of the archiver, from this process. */
export async function archiveExpiredCommand(ctx: AppContext): Promise<string> {
  const run = await runRetention(ctx, { holder: retentionHolder(ctx.config.nodeId) });
  if (!run.ran) return 'Another process is archiving now: nothing done.\n';
  return (
    `Archived ${run.archived} messages in ${run.batches} transactions; ` +
    `deleted ${run.vacuumed} archived messages and ${run.vacuumedTransactions} archive transactions ` +
    `past ARCHIVED_DATA_VACUUM_DAYS (${ctx.config.archivedDataVacuumDays}) in ${run.vacuumBatches} transactions.\n`
  );
}

/** `restore-retention` and `restore-archived`: what they restored, as one line; progress on stderr. */
export async function restoreCommand(
  ctx: AppContext,
  command: 'restore-retention' | 'restore-archived',
  opts: RetentionCliOptions,
): Promise<string> {
  const realm = await getRealmByStringId(ctx.db, opts.realm);
  if (!realm) throw new ApiError(`No organization with string id '${opts.realm}'`);
  const sel: RestoreSelection = { realmId: realm.id };
  if (command === 'restore-archived') {
    if (opts.transaction === undefined) throw new ApiError('--transaction is required');
    if (!/^[1-9]\d{0,9}$/.test(opts.transaction)) throw new ApiError('--transaction must be an archive transaction number');
    sel.transactionId = Number(opts.transaction);
  } else {
    sel.type = ArchiveType.RETENTION_POLICY;
    if (opts.channel !== undefined) {
      const channel = await getChannelByName(ctx.db, realm.id, opts.channel);
      if (!channel) throw new ApiError(`No channel '${opts.channel}' in that organization`);
      sel.recipientId = channel.recipient_id;
    }
    if (opts.since !== undefined) sel.since = parseSince(opts.since);
  }
  const progress = stderrProgress();
  progress.step('Restoring archived messages');
  try {
    const result = await doRestoreArchived(ctx, sel, progress);
    const { transactions, messages, expired } = result;
    const days = `ARCHIVED_DATA_VACUUM_DAYS (${ctx.config.archivedDataVacuumDays})`;
    const cutoff = new Date(result.cutoff * 1000).toISOString();
    if (command === 'restore-archived' && transactions === 0) {
      if (expired.length > 0)
        throw new ApiError(
          `Archive transaction ${sel.transactionId} was archived ${new Date(expired[0]!.timestamp * 1000).toISOString()}, ` +
            `more than ${days} days ago: its messages are deleted for good (or being deleted) and cannot be restored`,
        );
      if (result.transactionExists === false)
        throw new ApiError(
          `No archive transaction ${sel.transactionId} in that organization: never made, or deleted for good with its messages ${days} days after archiving`,
        );
      throw new ApiError(`No archive transaction ${sel.transactionId} with messages to restore in that organization`);
    }
    const done = `Restored ${messages} messages from ${transactions} archive transactions`;
    if (expired.length > 0) {
      const left = expired.reduce((n, b) => n + b.messages, 0);
      return `${done}; ${left} messages of ${expired.length} archive transactions archived before ${cutoff} are past ${days} days and cannot be restored (the archiver deletes them for good).\n`;
    }
    if (transactions === 0 && (sel.since === undefined || sel.since < result.cutoff))
      return `${done}; archived messages are deleted for good ${days} days after archiving: nothing archived before ${cutoff} can be restored.\n`;
    return `${done}.\n`;
  } finally {
    progress.end();
  }
}

/** An ISO 8601 date (or date and time) or UNIX seconds, as UNIX seconds. */
function parseSince(text: string): number {
  if (/^\d{1,12}$/.test(text)) return Number(text);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new ApiError(`--since must be an ISO date (2024-05-01, 2024-05-01T12:00:00Z) or UNIX seconds, not '${text}'`);
  return Math.floor(ms / 1000);
}
