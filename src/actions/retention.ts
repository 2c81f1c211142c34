import crypto from 'node:crypto';
import os from 'node:os';
import type { AppContext } from '../context';
import { inTransaction, type Tx } from '../db/transaction';
import { ArchiveType } from '../queries/archive';
import { getChannelById } from '../queries/channels';
import { releaseLease, renewLease, takeLease } from '../queries/leases';
import {
  ChannelRetention,
  listChannelRetention,
  listExpiredChannelMessages,
  listExpiredDirectMessages,
  listRealmRetention,
  RealmRetention,
} from '../queries/retention';
import { listVacuumScopes, vacuumBatchInTx, vacuumCutoff, VacuumScope } from './archive-vacuum';
import { ArchivedConversation, archiveConversationsInTx } from './message-archive';

/**
 * The retention policy (Zulip's zerver/lib/retention.py archive_messages):
 * messages older than their conversation's retention period move to the
 * archive, as a deletion moves them (src/actions/message-archive.ts), with
 * archive_type RETENTION_POLICY. docs/adr/0032-message-retention.md.
 * - A channel's messages expire after the channel's message_retention_days,
 *   or the organization's when the channel inherits (NULL); never in a
 *   channel set to -1, nor in an inheriting channel of an organization that
 *   keeps messages forever (NULL or -1).
 * - Direct messages expire after the organization's period.
 * - Each batch (RETENTION_BATCH_SIZE messages of one channel, or of one
 *   organization's direct messages) is one transaction: a crash between
 *   batches leaves every message either live or archived whole, and the next
 *   run takes up what is left (the selection is by age, not by a cursor).
 * - One process of a cluster archives at a time: the run holds the
 *   `retention` lease (src/queries/leases.ts), taken before it starts and
 *   renewed inside every batch's transaction, so a process that lost it (it
 *   stalled past the expiry and another took over) archives nothing more.
 * - Clients hear delete_message per conversation, as for a deletion.
 * - After archiving, the same run vacuums: archive transactions older than
 *   ARCHIVED_DATA_VACUUM_DAYS go with what was archived under them
 *   (src/actions/archive-vacuum.ts), in batches of RETENTION_BATCH_SIZE under
 *   the same lease.
 */

export const RETENTION_LEASE = 'retention';
/** How long the lease lasts without renewal: far beyond one batch, short enough for another node to take over soon after a crash. */
export const RETENTION_LEASE_MS = 5 * 60_000;

export interface RetentionRun {
  /** False when another process held the lease: this run did nothing. */
  ran: boolean;
  archived: number;
  /** Transactions that moved messages. */
  batches: number;
  /** Archived messages deleted for good (past ARCHIVED_DATA_VACUUM_DAYS). */
  vacuumed: number;
  /** Archive transactions deleted with them. */
  vacuumedTransactions: number;
  /** Transactions that vacuumed. */
  vacuumBatches: number;
  /** True when the run stopped early (shutdown, or the lease was lost). */
  interrupted: boolean;
}

export interface RetentionOptions {
  /** Who this process is in the lease (unique per process). */
  holder: string;
  /** Checked between batches: the server's stop. */
  shouldStop?: () => boolean;
}

class LeaseLost extends Error {}

/** What a run of the archiver uses of the application's context. */
type RetentionContext = Pick<AppContext, 'db' | 'bus' | 'clock' | 'config'>;

/** A name for this process in the lease: node, host, process id, and a random part (two runs of one process differ). */
export function retentionHolder(nodeId: string | null): string {
  return `${nodeId ?? os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`.slice(0, 200);
}

/**
 * One run of the archiver, with times from `ctx.clock` (tests move it): takes
 * the lease or returns `ran: false`, archives every expired message batch
 * by batch, vacuums the archive past its grace period batch by batch, then
 * gives the lease up.
 */
export async function runRetention(ctx: RetentionContext, opts: RetentionOptions): Promise<RetentionRun> {
  const { holder } = opts;
  const started = ctx.clock.now();
  const taken = await inTransaction(ctx.db, (tx) => takeLease(tx.trx, RETENTION_LEASE, holder, started, started + RETENTION_LEASE_MS));
  const run: RetentionRun = {
    ran: taken,
    archived: 0,
    batches: 0,
    vacuumed: 0,
    vacuumedTransactions: 0,
    vacuumBatches: 0,
    interrupted: false,
  };
  if (!taken) return run;
  try {
    // Every period is counted back from the start of the run.
    const nowSeconds = Math.floor(started / 1000);
    const [channels, realms] = await Promise.all([listChannelRetention(ctx.db), listRealmRetention(ctx.db)]);
    for (const policy of channels) {
      const select = expiredInChannel(ctx, policy, nowSeconds - policy.days * 86_400);
      if (!(await drain(ctx, opts, run, (now) => archiveBatch(ctx, opts, policy.realmId, now, select)))) break;
    }
    if (!run.interrupted) {
      for (const policy of realms) {
        const select = expiredDirect(ctx, policy, nowSeconds - policy.days * 86_400);
        if (!(await drain(ctx, opts, run, (now) => archiveBatch(ctx, opts, policy.realmId, now, select)))) break;
      }
    }
    if (!run.interrupted) {
      const before = vacuumCutoff(nowSeconds, ctx.config.archivedDataVacuumDays);
      for (const scope of await listVacuumScopes(ctx.db)) {
        if (!(await vacuum(ctx, opts, run, scope, before))) break;
      }
    }
  } catch (err) {
    if (err instanceof LeaseLost) {
      run.interrupted = true;
      return run; // not ours any more: nothing to release
    }
    // Given up at once rather than left to lapse, when the database still answers.
    await inTransaction(ctx.db, (tx) => releaseLease(tx.trx, RETENTION_LEASE, holder)).catch(() => undefined);
    throw err;
  }
  await inTransaction(ctx.db, (tx) => releaseLease(tx.trx, RETENTION_LEASE, holder));
  return run;
}

/** Runs batches until one moves fewer than a full batch; false when the run must stop (shutdown). */
async function drain(
  ctx: Pick<AppContext, 'clock' | 'config'>,
  opts: RetentionOptions,
  run: RetentionRun,
  batch: (nowSeconds: number) => Promise<{ selected: number; archived: number }>,
): Promise<boolean> {
  for (;;) {
    if (opts.shouldStop?.()) {
      run.interrupted = true;
      return false;
    }
    const { selected, archived } = await batch(Math.floor(ctx.clock.now() / 1000));
    if (archived > 0) {
      run.archived += archived;
      run.batches += 1;
    }
    if (selected < ctx.config.retentionBatchSize) return true;
  }
}

/** Vacuums one scope batch by batch until it is done; false when the run must stop (shutdown). */
async function vacuum(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config'>,
  opts: RetentionOptions,
  run: RetentionRun,
  scope: VacuumScope,
  before: number,
): Promise<boolean> {
  for (;;) {
    if (opts.shouldStop?.()) {
      run.interrupted = true;
      return false;
    }
    const batch = await inTransaction(ctx.db, async (tx) => {
      await keepLease(ctx, tx.trx, opts.holder);
      return vacuumBatchInTx(tx, scope, before, ctx.config.retentionBatchSize);
    });
    if (batch.messages > 0 || batch.transactions > 0) {
      run.vacuumed += batch.messages;
      run.vacuumedTransactions += batch.transactions;
      run.vacuumBatches += 1;
    }
    if (batch.done) return true;
  }
}

/** Keeps the lease inside a batch's transaction: a batch commits only while its run holds it. */
async function keepLease(ctx: Pick<AppContext, 'clock'>, trx: Parameters<typeof renewLease>[0], holder: string): Promise<void> {
  const now = ctx.clock.now();
  if (!(await renewLease(trx, RETENTION_LEASE, holder, now + RETENTION_LEASE_MS))) throw new LeaseLost();
}

/** A batch's expired messages, as the conversations that each hear one delete_message. */
interface ExpiredBatch {
  selected: number;
  conversations: ArchivedConversation[];
}

/** Reads a batch's expired messages in its transaction; null when none is left to archive. */
type ExpiredSelection = (trx: Tx['trx']) => Promise<ExpiredBatch | null>;

/** One transaction under the lease: what `select` reads in it moves to the archive. */
async function archiveBatch(
  ctx: RetentionContext,
  opts: RetentionOptions,
  realmId: number,
  now: number,
  select: ExpiredSelection,
): Promise<{ selected: number; archived: number }> {
  return inTransaction(ctx.db, async (tx) => {
    await keepLease(ctx, tx.trx, opts.holder);
    const batch = await select(tx.trx);
    if (!batch) return { selected: 0, archived: 0 };
    const archived = await archiveConversationsInTx(tx, ctx.bus, {
      realmId,
      conversations: batch.conversations,
      archiveType: ArchiveType.RETENTION_POLICY,
      now,
      actingUserId: null,
    });
    return { selected: batch.selected, archived };
  });
}

/** Message ids by the conversation `keyOf` names, in the order the conversations first come. */
function idsBy<K, R extends { id: number }>(rows: readonly R[], keyOf: (row: R) => K): Map<K, number[]> {
  const groups = new Map<K, number[]>();
  for (const r of rows) {
    const ids = groups.get(keyOf(r));
    if (ids) ids.push(r.id);
    else groups.set(keyOf(r), [r.id]);
  }
  return groups;
}

/** Selects the channel's oldest expired messages, one conversation (one delete_message) per topic. */
function expiredInChannel(ctx: RetentionContext, policy: ChannelRetention, before: number): ExpiredSelection {
  return async (trx) => {
    const rows = await listExpiredChannelMessages(trx, policy.recipientId, before, ctx.config.retentionBatchSize);
    if (rows.length === 0) return null;
    // Read in the transaction: the previous batch may have moved first_message_id.
    const channel = await getChannelById(trx, policy.realmId, policy.channelId);
    if (!channel) return null;
    const byTopic = idsBy(rows, (r) => r.topic_key);
    return { selected: rows.length, conversations: [...byTopic].map(([topicKey, ids]) => ({ channel, topicKey, ids })) };
  };
}

/** Selects the organization's oldest expired direct messages, one conversation (one delete_message) per recipient. */
function expiredDirect(ctx: RetentionContext, policy: RealmRetention, before: number): ExpiredSelection {
  return async (trx) => {
    const rows = await listExpiredDirectMessages(trx, policy.realmId, before, ctx.config.retentionBatchSize);
    if (rows.length === 0) return null;
    const byConversation = idsBy(rows, (r) => r.recipient_id);
    return { selected: rows.length, conversations: [...byConversation.values()].map((ids) => ({ channel: null, topicKey: '', ids })) };
  };
}

/**
 * Runs the archiver every RETENTION_INTERVAL_MS on the context's clock (the
 * first run one interval after the start); returns the stop function, which
 * resolves once a run in progress has finished its batch. Every process
 * runs the timer; the lease lets one of them work at a time.
 */
/**
 * The first run comes a minute after start (or after the interval, if
 * shorter), then every interval: a process restarted more often than the
 * interval (a deploy each half hour) would otherwise never archive.
 */
export const RETENTION_FIRST_RUN_MS = 60_000;
export const firstRetentionRunMs = (intervalMs: number) => Math.min(intervalMs, RETENTION_FIRST_RUN_MS);

export function startRetentionArchiver(
  ctx: Pick<AppContext, 'db' | 'bus' | 'clock' | 'config' | 'retention'>,
  onError: (err: unknown) => void,
  onRun: (run: RetentionRun) => void = () => undefined,
): () => Promise<void> {
  const holder = retentionHolder(ctx.config.nodeId);
  let cancel: () => void = () => undefined;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = runRetention(ctx, { holder, shouldStop: () => stopped })
      .then(
        (run) => {
          ctx.retention.archived += run.archived;
          ctx.retention.vacuumed += run.vacuumed;
          ctx.retention.runs[run.ran ? 'done' : 'lease_held'] += 1;
          onRun(run);
        },
        (err: unknown) => {
          ctx.retention.runs.failed += 1;
          onError(err);
        },
      )
      .finally(() => {
        if (!stopped) cancel = ctx.clock.schedule(tick, ctx.config.retentionIntervalMs);
      });
  };
  cancel = ctx.clock.schedule(tick, firstRetentionRunMs(ctx.config.retentionIntervalMs));
  return () => {
    stopped = true;
    cancel();
    return running;
  };
}
