import type { AppContext } from '../context';
import { inTransaction, type Tx } from '../db/transaction';
import { LeaseLost, startLeasedLoop, type LeasedLoop } from './leased-loop';
import { ApiError } from '../errors';
import { loadCaller } from '../access/viewer';
import { getChannelById } from '../queries/channels';
import { compileLinkifier, type CompiledLinkifier } from '../domain/linkifiers';
import { listLinkifiers } from '../queries/linkifiers';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import {
  claimPending,
  DeliveryType,
  listDue,
  markDelivered,
  markFailed,
  nextDueTimestamp,
  type ScheduledMessageRow,
} from '../queries/scheduled-messages';
import { getUserById, listUsersByIds } from '../queries/users';
import { toApiScheduledMessage } from '../serializers/scheduled-messages';
import { sendMessageInTx, type SendTarget } from './messages';
import { INTERNAL, notificationBot } from './notifications';
import { reminderContentInTx } from './reminder-content';

/**
 * The delivery scheduler of scheduled messages and reminders
 * (docs/architecture/scheduled-delivery.md, docs/adr/0044-scheduled-delivery.md).
 *
 * - Durable: what is due lives in `scheduled_messages`; a delivery claims
 *   the row (locked, still pending) and marks it delivered in the
 *   transaction that sends the message, so a crash at any point leaves
 *   either both or neither, and the next run (here or on another node)
 *   finds it still pending or already sent: exactly once.
 * - Once across a cluster: the `scheduled_delivery` lease (migration 030)
 *   names the one process that delivers; every delivery transaction renews
 *   it first (the lease row is locked on MariaDB), so a holder that lost it
 *   while paused cannot commit a delivery beside the new one.
 * - On time: the holder sleeps until the earliest pending delivery time, at
 *   most `pollMs` (one indexed MIN query, which is how it learns of messages
 *   scheduled on other nodes); a message scheduled or edited in this process
 *   wakes it at once (wakeScheduledDelivery).
 */

const LEASE = 'scheduled_delivery';

/** Zulip gives up on a scheduled message this late (the server was down): it fails rather than surprise its recipients. */
export const LATE_CUTOFF_SECONDS = 10 * 60;

/** Messages delivered per transaction; a batch with a failure in it is redone one message per transaction. */
const BATCH = 50;

export interface SchedulerOptions {
  /** How long the lease lasts unrenewed: how soon another node takes over after a crash. */
  leaseMs: number;
  /** The holder's longest sleep (it reads the next delivery time at least this often); a non-holder tries the lease at twice this or a third of the lease, whichever is longer. */
  pollMs: number;
  onError: (err: unknown) => void;
  /** After each delivery's commit (the bench and the logs). */
  onDelivered?: (row: ScheduledMessageRow, messageId: number | null, atMs: number) => void;
  /** After each failure is recorded. */
  onFailed?: (row: ScheduledMessageRow, reason: string) => void;
}

export const DEFAULT_SCHEDULER_OPTIONS = { leaseMs: 15_000, pollMs: 1_000 } as const;

const wakers = new WeakMap<object, (dueSeconds: number) => void>();

/** Tells this process's scheduler that something is due at `dueSeconds` (a message was scheduled or edited here). */
export function wakeScheduledDelivery(ctx: AppContext, dueSeconds: number): void {
  wakers.get(ctx)?.(dueSeconds);
}

/** Why a delivery did not happen, as Zulip words it; `notify`: whether Notification Bot tells the sender. */
class DeliveryFailure extends Error {
  constructor(
    message: string,
    readonly notify: boolean,
  ) {
    super(message);
  }
}

type Ctx = Pick<AppContext, 'db' | 'bus' | 'caches' | 'messageCache' | 'config'>;

/** Starts the scheduler; the returned function stops it (waiting for a delivery in progress) and gives the lease up. */
export function startScheduledDelivery(ctx: AppContext, opts: SchedulerOptions): () => Promise<void> {
  const loop = startLeasedLoop(ctx.db, { lease: LEASE, nodeId: ctx.config.nodeId, ...opts }, async (loop) => {
    for (;;) {
      if (loop.stopped()) return opts.pollMs;
      const due = await listDue(ctx.db, Math.floor(Date.now() / 1000), BATCH);
      if (due.length === 0) break;
      await deliverBatch(
        ctx,
        loop,
        opts,
        due.map((d) => d.id),
        await linkifiersOf(ctx, due),
      );
    }
    const next = await nextDueTimestamp(ctx.db);
    return next === null ? opts.pollMs : Math.min(opts.pollMs, next * 1000 - Date.now());
  });
  // A due time in this process: wake then, if the lease is ours (otherwise the holder's poll finds it).
  wakers.set(ctx, (dueSeconds) => {
    if (loop.holding()) loop.wake(dueSeconds * 1000 - Date.now());
  });
  return async () => {
    wakers.delete(ctx);
    await loop.stop();
  };
}

/** Each due item's organization's linkifiers, by organization. */
type Linkifiers = ReadonlyMap<number, readonly CompiledLinkifier[]>;

/**
 * Read before a delivery's transaction: a cache miss inside it would wait for
 * a second connection, which an embedded database without readers
 * (SQLITE_READERS=0) never grants while the transaction holds the one. An
 * item whose organization is missing here (it cannot be) reads them in the
 * transaction.
 */
async function linkifiersOf(ctx: Ctx, due: ReadonlyArray<{ realmId: number }>): Promise<Linkifiers> {
  const out = new Map<number, readonly CompiledLinkifier[]>();
  for (const realmId of new Set(due.map((d) => d.realmId))) out.set(realmId, await ctx.caches.linkifiers.get(realmId));
  return out;
}

interface Delivered {
  row: ScheduledMessageRow;
  messageId: () => number | null;
}

/**
 * Delivers `ids` in one transaction; when one of them fails, none is kept
 * and each is delivered (or marked failed) in a transaction of its own.
 */
async function deliverBatch(ctx: Ctx, loop: LeasedLoop, opts: SchedulerOptions, ids: number[], linkifiers: Linkifiers): Promise<void> {
  try {
    await deliverInOneTransaction(ctx, loop, opts, ids, linkifiers);
    return;
  } catch (err) {
    if (err instanceof LeaseLost || ids.length === 1) {
      if (ids.length === 1 && !(err instanceof LeaseLost)) return recordFailure(ctx, loop, opts, ids[0]!, err);
      throw err;
    }
  }
  for (const id of ids) {
    try {
      await deliverInOneTransaction(ctx, loop, opts, [id], linkifiers);
    } catch (err) {
      if (err instanceof LeaseLost) throw err;
      await recordFailure(ctx, loop, opts, id, err);
    }
  }
}

async function deliverInOneTransaction(
  ctx: Ctx,
  loop: LeasedLoop,
  opts: SchedulerOptions,
  ids: number[],
  linkifiers: Linkifiers,
): Promise<void> {
  const done = await inTransaction(ctx.db, async (tx) => {
    await loop.keepLease(tx);
    const out: Delivered[] = [];
    for (const id of ids) {
      // The claim: locked and still pending, or already delivered by someone else (skip it).
      const row = await claimPending(tx.trx, id);
      if (!row) continue;
      const messageId = await deliverInTx(ctx, tx, row, linkifiers);
      await markDelivered(tx.trx, row.id, messageId);
      out.push({ row, messageId: () => messageId });
    }
    tx.afterCommit(() => {
      for (const d of out) {
        const event =
          d.row.delivery_type === DeliveryType.REMIND
            ? { type: 'reminders', op: 'remove', reminder_id: d.row.id }
            : { type: 'scheduled_messages', op: 'remove', scheduled_message_id: d.row.id };
        ctx.bus.publish({ event, userIds: [d.row.sender_id] });
      }
    });
    return out;
  });
  const at = Date.now();
  for (const d of done) opts.onDelivered?.(d.row, d.messageId(), at);
}

/** Sends one claimed message through the send path, checked again as Zulip's send_scheduled_message does; the new message's id. */
async function deliverInTx(ctx: Ctx, tx: Tx, row: ScheduledMessageRow, byRealm: Linkifiers): Promise<number> {
  const realm = await getRealmById(tx.trx, row.realm_id);
  // As Zulip: a deactivated organization or sender fails without a notice (nobody would read it).
  if (!realm || realm.deactivated) throw new DeliveryFailure('This organization has been deactivated', false);
  const sender = await getUserById(tx.trx, row.sender_id);
  if (!sender || !sender.is_active) throw new DeliveryFailure('Account is deactivated', false);
  const linkifiers = byRealm.get(realm.id) ?? (await listLinkifiers(tx.trx, realm.id)).map(compileLinkifier).filter((l) => l !== null);
  if (row.delivery_type === DeliveryType.REMIND) {
    // Reminders go to the sender's own direct messages, so lateness surprises nobody: no cutoff.
    const content = await reminderContentInTx(tx, ctx, realm, sender, row);
    const bot = await notificationBot(tx, realm.id);
    const id = await sendMessageInTx(tx, ctx.bus, await loadCaller(tx.trx, bot, realm), { kind: 'direct', recipients: [sender] }, content, {
      ...INTERNAL,
      readBySender: true,
      messageCache: ctx.messageCache,
      linkifiers,
    });
    return tx.idOf(id);
  }
  if (Date.now() / 1000 > row.scheduled_timestamp + LATE_CUTOFF_SECONDS) {
    throw new DeliveryFailure('Message could not be sent at the scheduled time.', true);
  }
  const target = await targetOf(tx, realm, sender, row);
  const id = await sendMessageInTx(tx, ctx.bus, await loadCaller(tx.trx, sender, realm), target, row.content, {
    client: row.sending_client,
    readBySender: row.read_by_sender,
    messageCache: ctx.messageCache,
    linkifiers,
  });
  return tx.idOf(id);
}

async function targetOf(tx: Tx, realm: RealmRow, sender: UserRow, row: ScheduledMessageRow): Promise<SendTarget> {
  if (row.channel_id !== null) {
    const channel = await getChannelById(tx.trx, realm.id, row.channel_id);
    if (!channel)
      throw new ApiError(`Channel with ID '${row.channel_id}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream_id: row.channel_id });
    return { kind: 'channel', channel, topic: row.topic };
  }
  const users = await listUsersByIds(tx.trx, realm.id, row.to_user_ids);
  for (const u of users) if (!u.is_active) throw new ApiError(`'${u.email}' is no longer using Zulip.`);
  return { kind: 'direct', recipients: users.length ? users : [sender] };
}

/**
 * Marks the message failed with Zulip's words for why, tells the sender's
 * clients (a scheduled_messages update with failed: true) and, for a
 * scheduled message, sends Zulip's notice from Notification Bot.
 */
async function recordFailure(ctx: Ctx, loop: LeasedLoop, opts: SchedulerOptions, id: number, err: unknown): Promise<void> {
  let reason: string;
  let notify = true;
  if (err instanceof DeliveryFailure) {
    reason = err.message;
    notify = err.notify;
  } else if (err instanceof ApiError && err.status < 500) {
    reason = err.message;
  } else if (err instanceof ApiError) {
    // The database is away (a 503): not the message's fault; it stays pending for the next run.
    throw err;
  } else {
    opts.onError(err);
    reason = 'Internal server error';
  }
  const failed = await inTransaction(ctx.db, async (tx) => {
    await loop.keepLease(tx);
    const row = await claimPending(tx.trx, id);
    if (!row) return null;
    await markFailed(tx.trx, id, reason);
    const updated: ScheduledMessageRow = { ...row, failed: true, failure_message: reason };
    if (row.delivery_type === DeliveryType.SEND_LATER && notify) {
      const realm = (await getRealmById(tx.trx, row.realm_id))!;
      const sender = (await getUserById(tx.trx, row.sender_id))!;
      const bot = await notificationBot(tx, realm.id);
      await sendMessageInTx(
        tx,
        ctx.bus,
        await loadCaller(tx.trx, bot, realm),
        { kind: 'direct', recipients: [sender] },
        failureNotice(row, reason),
        {
          ...INTERNAL,
          messageCache: ctx.messageCache,
        },
      );
      tx.afterCommit(() =>
        ctx.bus.publish({
          event: { type: 'scheduled_messages', op: 'update', scheduled_message: toApiScheduledMessage(updated) },
          userIds: [row.sender_id],
        }),
      );
    }
    return updated;
  });
  if (failed) opts.onFailed?.(failed, reason);
}

/** Zulip's notice to the sender of a scheduled message that could not be sent (the time as a <time:> the clients show in local time). */
export function failureNotice(row: Pick<ScheduledMessageRow, 'scheduled_timestamp'>, reason: string): string {
  const when = new Date(row.scheduled_timestamp * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
  return [
    `The message you scheduled for <time:${when}> was not sent because of the following error:`,
    '',
    `> ${reason}`,
    '',
    '[View scheduled messages](#scheduled)',
  ].join('\n');
}
