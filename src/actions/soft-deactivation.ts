import type { Knex } from 'knex';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { parseSettings } from '../domain/user-settings';
import { insertAuditLog } from '../queries/audit';
import { nowSeconds } from '../queries/ids';
import { getUsersByIds, insertUserMessagesOfUser } from '../queries/messages';
import { findLastMessageSentBefore } from '../queries/unread';
import {
  finishSoftReactivation,
  getIdleState,
  getNewestMessageId,
  listActiveHumansAmong,
  listCatchUpCandidates,
  listCatchUpSources,
  listDueSoftReactivations,
  listUsersToSoftDeactivate,
  lockUserForCatchUp,
  markUsersActiveAgain,
  markUsersIdle,
  setLastActiveMessageId,
  setLastVisitTimes,
  insertSoftReactivation,
  deleteSoftReactivation,
} from '../queries/soft-deactivation';
import { startLeasedLoop } from './leased-loop';
import { UNREAD_HORIZON_MARGIN_SECONDS } from './unread-horizon';

/**
 * Soft deactivation (ADR 0058). Users who made no request for more than 28
 * days go idle: a channel send leaves out the rows it may (flags 0, nothing
 * to notify), and their next request catches them up first, so what they
 * see is what a never-idle twin would see.
 */

/** Idle after more than this many whole days without a request (Zulip's 28). */
export const IDLE_AFTER_DAYS = 28;
/** Users marked idle per transaction (Zulip's batch). */
const MARK_BATCH = 100;
/** Catch-up rows per transaction; the marker moves after each, so an interrupted catch-up resumes. */
export const CATCH_UP_CHUNK = 10_000;
/** A user's visit is recorded at most this often (the job only needs the day). */
const VISIT_EVERY_SECONDS = 3600;
/** Visits wait in memory this long, then go out in one statement: no request writes its own. */
const VISIT_FLUSH_MS = 30_000;

type Ctx = Pick<AppContext, 'db'>;

/** Per process: when each user's visit was last noted, those not written yet, and the catch-ups running. */
interface ProcessState {
  visits: Map<number, number>;
  unwritten: Set<number>;
  flushTimer: NodeJS.Timeout | null;
  catchingUp: Map<number, Promise<void>>;
}
const states = new WeakMap<Knex, ProcessState>();
function stateOf(db: Knex): ProcessState {
  let s = states.get(db);
  if (!s) states.set(db, (s = { visits: new Map(), unwritten: new Set(), flushTimer: null, catchingUp: new Map() }));
  return s;
}

/**
 * An authenticated request: when the caller is idle, catches them up before
 * the request goes on; and notes the visit (at most hourly per user), which
 * a timer writes for everyone at once. With SOFT_DEACTIVATION_DAYS 0 nobody
 * goes idle, and visits are not recorded.
 */
export async function doNoteVisit(
  ctx: Pick<AppContext, 'db' | 'config'>,
  user: { id: number; long_term_idle: boolean; is_bot: boolean },
): Promise<void> {
  if (user.long_term_idle) await doSoftReactivate(ctx, user.id);
  if (user.is_bot || ctx.config.softDeactivationDays === 0) return;
  const s = stateOf(ctx.db);
  const now = nowSeconds();
  if ((s.visits.get(user.id) ?? 0) > now - VISIT_EVERY_SECONDS) return;
  if (s.visits.size > 100_000) s.visits.clear();
  s.visits.set(user.id, now);
  s.unwritten.add(user.id);
  if (!s.flushTimer) {
    s.flushTimer = setTimeout(() => void doFlushVisits(ctx.db), VISIT_FLUSH_MS);
    s.flushTimer.unref();
  }
}

/** Writes the visits noted since the last flush (best effort: a failed write is noted again at the next request). */
export async function doFlushVisits(db: Knex): Promise<void> {
  const s = stateOf(db);
  if (s.flushTimer) clearTimeout(s.flushTimer);
  s.flushTimer = null;
  if (s.unwritten.size === 0) return;
  const ids = [...s.unwritten];
  s.unwritten.clear();
  const now = nowSeconds();
  await setLastVisitTimes(db, ids, now, now - VISIT_EVERY_SECONDS).catch(() => {
    for (const id of ids) s.visits.delete(id);
  });
}

/**
 * Marks these users idle, 100 a transaction: their last active message is
 * the newest message now (every row up to it is decided: they were not idle
 * when it was sent), their subscriptions learn whether they keep rows, and
 * an audit row says so. Users who are bots, deactivated or idle already are
 * left. Returns how many went idle.
 */
export async function doSoftDeactivateUsers(ctx: Ctx, userIds: readonly number[]): Promise<number> {
  let count = 0;
  for (let i = 0; i < userIds.length; i += MARK_BATCH) {
    count += await inTransaction(ctx.db, async (tx) => {
      const ids = await listActiveHumansAmong(tx.trx, userIds.slice(i, i + MARK_BATCH), false);
      if (ids.length === 0) return 0;
      const users = [...(await getUsersByIds(tx.trx, ids)).values()];
      const newest = await getNewestMessageId(tx.trx);
      await markUsersIdle(
        tx.trx,
        users.map((u) => {
          const s = parseSettings(u.settings);
          return { id: u.id, pushDefault: s.enable_stream_push_notifications, emailDefault: s.enable_stream_email_notifications };
        }),
        newest,
      );
      await insertAuditLog(
        tx.trx,
        users.map((u) => ({ realmId: u.realm_id, actorId: null, userId: u.id, eventType: AuditEventType.USER_SOFT_DEACTIVATED })),
      );
      return users.length;
    });
  }
  return count;
}

/** The daily job: everyone whose last visit is more than `days` whole days before `now`. Returns how many went idle. */
export async function doSoftDeactivateInactive(ctx: Ctx, now = nowSeconds(), days = IDLE_AFTER_DAYS, realmId?: number): Promise<number> {
  const before = now - (days + 1) * 86_400 + 1;
  let count = 0;
  for (;;) {
    const ids = await listUsersToSoftDeactivate(ctx.db, before, MARK_BATCH, realmId);
    if (ids.length === 0) return count;
    const marked = await doSoftDeactivateUsers(ctx, ids);
    count += marked;
    if (marked === 0) return count;
  }
}

/**
 * Brings an idle user back: the catch-up (every channel message they would
 * have a row for, inserted unread), then, in one transaction, the idle bits
 * cleared, an audit row, and the second pass recorded. Concurrent requests
 * of one user in this process share it; across processes each chunk locks
 * the user's row and skips the rows that exist.
 */
export function doSoftReactivate(ctx: Ctx, userId: number): Promise<void> {
  const running = stateOf(ctx.db).catchingUp;
  let p = running.get(userId);
  if (!p) {
    p = reactivate(ctx, userId).finally(() => running.delete(userId));
    running.set(userId, p);
  }
  return p;
}

async function reactivate(ctx: Ctx, userId: number): Promise<void> {
  const began = nowSeconds();
  const state = await getIdleState(ctx.db, userId);
  if (!state.idle) return;
  await catchUp(ctx.db, userId, state.lastActiveMessageId, true);
  await inTransaction(ctx.db, async (tx) => {
    const cleared = await markUsersActiveAgain(tx.trx, [userId]);
    if (cleared.length === 0) return;
    const user = (await getUsersByIds(tx.trx, [userId])).get(userId);
    if (!user) return;
    // A send that read the user as idle may commit up to the margin late, below the ids
    // caught up: the second pass looks again from before any such send began. Never
    // below the last active message: rows up to it were decided while the user was not
    // idle, and a channel's older messages without a row are from before they joined.
    // ADR 0024's commit margin: no send transaction is older than that.
    const margin = await findLastMessageSentBefore(tx.trx, user.realm_id, began - UNREAD_HORIZON_MARGIN_SECONDS);
    const from = Math.max(state.lastActiveMessageId, margin ?? 0);
    await insertSoftReactivation(tx.trx, userId, from, nowSeconds() + UNREAD_HORIZON_MARGIN_SECONDS);
    // A visit now: the daily job does not take them again before their next 28 days.
    await setLastVisitTimes(tx.trx, [userId], nowSeconds(), nowSeconds());
    await insertAuditLog(tx.trx, { realmId: user.realm_id, actorId: null, userId, eventType: AuditEventType.USER_SOFT_ACTIVATED });
  });
}

/**
 * Inserts, unread, the rows of the messages after `from` in the user's
 * channels (and the spans of channels they left while idle) that they have
 * no row for, CATCH_UP_CHUNK a transaction in id order. `moveMarker`: the
 * first pass moves last_active_message_id after each chunk.
 */
async function catchUp(db: Knex, userId: number, from: number, moveMarker: boolean): Promise<number> {
  let cursor = from;
  let total = 0;
  for (;;) {
    const ids = await inTransaction(db, async (tx) => {
      // One catch-up of a user at a time across processes: the other waits, then finds the rows.
      await lockUserForCatchUp(tx.trx, userId);
      // Read in each chunk's transaction: a channel left meanwhile is a span from now on.
      const sources = await listCatchUpSources(tx.trx, userId, from);
      const found = await listCatchUpCandidates(tx.trx, userId, sources, cursor, CATCH_UP_CHUNK);
      if (found.length === 0) return found;
      await insertUserMessagesOfUser(tx.trx, userId, found, 0, true);
      if (moveMarker) await setLastActiveMessageId(tx.trx, userId, found[found.length - 1]!);
      return found;
    });
    if (ids.length === 0) return total;
    total += ids.length;
    cursor = ids[ids.length - 1]!;
  }
}

/** The second passes due by `now`: the same catch-up from each one's start, with no upper bound, then the books closed. */
export async function doDueSecondPasses(ctx: Ctx, now = nowSeconds(), limit = 100): Promise<number> {
  const due = await listDueSoftReactivations(ctx.db, now, limit);
  for (const d of due) {
    const state = await getIdleState(ctx.db, d.userId);
    if (state.idle) {
      // Cannot happen (a user with a pass due is not marked idle); if it did, the idle
      // period's spans are that period's: only the pass goes.
      await inTransaction(ctx.db, (tx) => deleteSoftReactivation(tx.trx, d.userId));
      continue;
    }
    await catchUp(ctx.db, d.userId, d.from, false);
    await inTransaction(ctx.db, (tx) => finishSoftReactivation(tx.trx, d.userId));
  }
  return due.length;
}

/** Marks named users idle, or active again (the CLI's soft-deactivate). */
export async function doSoftActivateUsers(ctx: Ctx, userIds: readonly number[]): Promise<number> {
  const idle = await listActiveHumansAmong(ctx.db, userIds, true);
  for (const id of idle) await doSoftReactivate(ctx, id);
  return idle.length;
}

export interface SoftDeactivationOptions {
  leaseMs: number;
  /** How often the holder looks for due second passes. */
  pollMs: number;
  /** Idle after more than this many whole days without a request (SOFT_DEACTIVATION_DAYS); 0: the daily job does not run. */
  days: number;
  onError: (err: unknown) => void;
  /** After a daily run that marked users idle. */
  onDeactivated?: (count: number) => void;
}

export const DEFAULT_SOFT_DEACTIVATION_OPTIONS = { leaseMs: 60_000, pollMs: 60_000 } as const;

/**
 * The worker one process of a cluster runs (a leased loop, ADR 0044): the
 * daily job on start and every 24 hours after, and the second passes as
 * they fall due. The returned function stops it.
 */
export function startSoftDeactivation(ctx: Pick<AppContext, 'db' | 'config'>, opts: SoftDeactivationOptions): () => Promise<void> {
  let lastDaily = 0;
  const loop = startLeasedLoop(ctx.db, { lease: 'soft_deactivation', nodeId: ctx.config.nodeId, ...opts }, async (l) => {
    if (opts.days > 0 && Date.now() - lastDaily >= 86_400_000) {
      const count = await doSoftDeactivateInactive(ctx, nowSeconds(), opts.days);
      lastDaily = Date.now();
      if (count > 0) opts.onDeactivated?.(count);
    }
    while (!l.stopped() && (await doDueSecondPasses(ctx)) > 0);
    return opts.pollMs;
  });
  return async () => {
    await loop.stop();
    await doFlushVisits(ctx.db);
  };
}
