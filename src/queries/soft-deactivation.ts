import type { Knex } from 'knex';
import type { TableInsert } from '../../generated/tables';
import { invalidates } from '../db/invalidations';
import { RecipientType } from '../domain/recipients';
import { dialectOf } from '../db/connection';
import { inChunks, insertRows } from './ids';
import { addUnlistedReceiversOfRows, listExistingPairs } from './message-receivers';
import { insertUnreadRowsOfMessages } from './unread';
import { listChannelIdsSubscribedBy } from './users';

type Q = Knex | Knex.Transaction;

/**
 * The statements of soft deactivation (ADR 0058): who goes idle, the
 * subscription bookkeeping kept only for idle users, and the catch-up's
 * candidates. The catch-up inserts its rows through insertUserMessagesOfUser
 * (./messages.ts), which also writes the side rows an old unread row needs.
 */

/** Sets these users' last_visit_time to `now`, except where it was recorded at or after `notBefore`. */
export async function setLastVisitTimes(q: Q, userIds: readonly number[], now: number, notBefore: number): Promise<void> {
  await inChunks(userIds, async (slice) => {
    await q('users')
      .whereIn('id', slice)
      .andWhere((b) => b.whereNull('last_visit_time').orWhere('last_visit_time', '<', notBefore))
      .update({ last_visit_time: now });
    return [];
  });
  // No invalidation, as last_active_time (./activity.ts): only the daily job's SQL reads it.
}

/** Active human users, not idle, whose last recorded visit is before `before`: the next to go idle, oldest visit first. */
export async function listUsersToSoftDeactivate(q: Q, before: number, limit: number, realmId?: number): Promise<number[]> {
  const qb = q('users as u')
    .where({ 'u.long_term_idle': false, 'u.is_active': true, 'u.is_bot': false })
    .where('u.last_visit_time', '<', before)
    .whereNotExists(q('soft_reactivations as r').whereRaw('r.user_id = u.id').select(q.raw('1')))
    .orderBy('u.last_visit_time')
    .limit(limit);
  if (realmId !== undefined) qb.where('u.realm_id', realmId);
  return (await qb.pluck('u.id')).map(Number);
}

/**
 * The users among these who are active humans, idle or not as asked. Those
 * not idle whose second catch-up pass is still due are left out: they are
 * not marked idle again before it ran.
 */
export async function listActiveHumansAmong(q: Q, userIds: readonly number[], idle: boolean): Promise<number[]> {
  const rows = await inChunks(userIds, (slice) => {
    const qb = q('users as u').whereIn('u.id', slice).where({ 'u.long_term_idle': idle, 'u.is_active': true, 'u.is_bot': false });
    if (!idle) qb.whereNotExists(q('soft_reactivations as r').whereRaw('r.user_id = u.id').select(q.raw('1')));
    return qb.pluck('u.id');
  });
  return rows.map(Number);
}

/** The newest message id there is (0 with none): everything up to it is decided for a user going idle now. */
export async function getNewestMessageId(q: Q): Promise<number> {
  const row: { id?: number | null } | undefined = await q('messages').max({ id: 'id' }).first();
  return Number(row?.id ?? 0);
}

/**
 * Marks users idle: the flag, their last active message id, and on each of
 * their subscriptions the idle bit and whether it keeps its rows (the
 * effective channel push or email setting, the user's own defaults given
 * per user). Drops the users' cached rows and the subscriber lists of their
 * channels.
 */
export async function markUsersIdle(
  q: Q,
  users: ReadonlyArray<{ id: number; pushDefault: boolean; emailDefault: boolean }>,
  lastActiveMessageId: number,
): Promise<void> {
  if (users.length === 0) return;
  const ids = users.map((u) => u.id);
  await q('users')
    .whereIn('id', ids)
    .where('long_term_idle', false)
    .update({ long_term_idle: true, last_active_message_id: lastActiveMessageId });
  for (const u of users) {
    await q('subscriptions')
      .where('user_id', u.id)
      .update({
        is_user_long_term_idle: true,
        idle_since_message_id: null,
        idle_keeps_rows: q.raw('CASE WHEN COALESCE(push_notifications, ?) = ? OR COALESCE(email_notifications, ?) = ? THEN 1 ELSE 0 END', [
          u.pushDefault,
          true,
          u.emailDefault,
          true,
        ]),
      });
  }
  invalidates(q, { kind: 'user', userIds: ids }, { kind: 'channel', channelIds: await listChannelIdsSubscribedBy(q, ids) });
}

/** Clears the idle state of users whose flag is still set: returns those it cleared. */
export async function markUsersActiveAgain(q: Q, userIds: readonly number[]): Promise<number[]> {
  const read = q('users').whereIn('id', userIds).where('long_term_idle', true);
  if (dialectOf(q as Knex) === 'mysql') read.forUpdate();
  const idle = (await read.pluck('id')).map(Number);
  if (idle.length === 0) return [];
  await q('users').whereIn('id', idle).update({ long_term_idle: false });
  await q('subscriptions').whereIn('user_id', idle).update({ is_user_long_term_idle: false, idle_keeps_rows: false });
  invalidates(q, { kind: 'user', userIds: idle }, { kind: 'channel', channelIds: await listChannelIdsSubscribedBy(q, idle) });
  return idle;
}

/** A user's idle state: their last active message id, and whether a second catch-up pass is pending. */
export async function getIdleState(
  q: Q,
  userId: number,
): Promise<{ idle: boolean; lastActiveMessageId: number; pendingSince: number | null }> {
  const row: { long_term_idle: number | boolean; last_active_message_id: number | null; from_message_id: number | null } | undefined =
    await q('users as u')
      .leftJoin('soft_reactivations as p', 'p.user_id', 'u.id')
      .where('u.id', userId)
      .first('u.long_term_idle', 'u.last_active_message_id', 'p.from_message_id');
  return {
    idle: Boolean(row?.long_term_idle),
    lastActiveMessageId: Number(row?.last_active_message_id ?? 0),
    pendingSince: row?.from_message_id == null ? null : Number(row.from_message_id),
  };
}

/**
 * Which of these users are idle, and which were caught up with a second
 * pass still due (with that pass's start).
 */
export async function listIdleAndPendingAmong(
  q: Q,
  userIds: readonly number[],
): Promise<{ idle: Set<number>; pending: Map<number, number> }> {
  const idle = await inChunks(userIds, (slice) => q('users').whereIn('id', slice).where('long_term_idle', true).pluck('id'));
  const pending: Array<{ user_id: number; from_message_id: number }> = await inChunks(userIds, (slice) =>
    q('soft_reactivations').whereIn('user_id', slice).select('user_id', 'from_message_id'),
  );
  return { idle: new Set(idle.map(Number)), pending: new Map(pending.map((r) => [Number(r.user_id), Number(r.from_message_id)])) };
}

/** Sets these users' subscription to a channel's idle columns. */
export async function updateIdleSubscriptions(
  q: Q,
  recipientId: number,
  userIds: readonly number[],
  changes: { idle_since_message_id: number | null; is_user_long_term_idle?: boolean; idle_keeps_rows?: boolean },
): Promise<void> {
  for (let i = 0; i < userIds.length; i += 1000)
    await q('subscriptions')
      .where('recipient_id', recipientId)
      .whereIn('user_id', userIds.slice(i, i + 1000))
      .update(changes);
}

/** These users' active subscription to a channel (not a DM group): since when it is idle, and their last active message. */
export async function listIdleSubscriptionStarts(
  q: Q,
  recipientId: number,
  userIds: readonly number[],
): Promise<Array<{ userId: number; idleSince: number; lastActive: number }>> {
  const rows: Array<{ user_id: number; idle_since_message_id: number | null; last_active_message_id: number | null }> = await q(
    'subscriptions as s',
  )
    .join('users as u', 'u.id', 's.user_id')
    .join('recipients as r', 'r.id', 's.recipient_id')
    .where({ 's.recipient_id': recipientId, 's.active': true, 'r.type': RecipientType.CHANNEL })
    .whereIn('s.user_id', userIds)
    .select('s.user_id', 's.idle_since_message_id', 'u.last_active_message_id');
  return rows.map((r) => ({
    userId: Number(r.user_id),
    idleSince: Number(r.idle_since_message_id ?? 0),
    lastActive: Number(r.last_active_message_id ?? 0),
  }));
}

export async function insertIdleSpans(q: Q, spans: ReadonlyArray<TableInsert<'idle_subscription_spans'>>): Promise<void> {
  await insertRows(q, 'idle_subscription_spans', spans);
}

/** Where the catch-up looks: each channel the user is in (after `from` or their joining), and each span. */
export interface CatchUpSource {
  recipientId: number;
  /** Messages with a greater id… */
  after: number;
  /** …up to this one (null: no bound). */
  upTo: number | null;
}

export async function listCatchUpSources(q: Q, userId: number, from: number): Promise<CatchUpSource[]> {
  // A channel joined while idle (or before the second pass) is not one: sends have written
  // its rows since (idle_keeps_rows), and before it the user was not there.
  const subs: Array<{ recipient_id: number }> = await q('subscriptions as s')
    .join('recipients as r', 'r.id', 's.recipient_id')
    .where({ 's.user_id': userId, 's.active': true, 'r.type': RecipientType.CHANNEL })
    .whereNull('s.idle_since_message_id')
    .select('s.recipient_id');
  const spans: Array<{ recipient_id: number; from_message_id: number; to_message_id: number }> = await q('idle_subscription_spans')
    .where('user_id', userId)
    .select('recipient_id', 'from_message_id', 'to_message_id');
  return [
    ...subs.map((s) => ({ recipientId: Number(s.recipient_id), after: from, upTo: null })),
    ...spans
      .filter((s) => Number(s.to_message_id) > from)
      .map((s) => ({
        recipientId: Number(s.recipient_id),
        after: Math.max(from, Number(s.from_message_id)),
        upTo: Number(s.to_message_id),
      })),
  ];
}

/**
 * The next message ids of the sources above `cursor` that the user has no
 * row for, in id order, about `limit` of them: each source is read in order
 * from the messages (recipient_id, id) index, `limit` shared among them, and
 * only the ids up to the first point where a source may have more are kept
 * (below it, every source's ids are all there). Empty: nothing is left.
 */
export async function listCatchUpCandidates(
  q: Q,
  userId: number,
  sources: readonly CatchUpSource[],
  cursor: number,
  limit: number,
): Promise<number[]> {
  const per = Math.max(100, Math.ceil(limit / Math.max(1, sources.length)));
  const found: number[] = [];
  let complete = Infinity;
  for (const s of sources) {
    const qb = q('messages as m')
      .where('m.recipient_id', s.recipientId)
      .where('m.id', '>', Math.max(cursor, s.after))
      .whereNotExists(q('user_messages as um').where('um.user_id', userId).whereRaw('um.message_id = m.id').select(q.raw('1')))
      .orderBy('m.id')
      .limit(per);
    if (s.upTo !== null) qb.where('m.id', '<=', s.upTo);
    const ids = (await qb.pluck('m.id')).map(Number);
    found.push(...ids);
    if (ids.length === per) complete = Math.min(complete, ids[ids.length - 1]!);
  }
  // Sources may overlap (a span and the channel rejoined): each id once.
  return [...new Set(found)].filter((id) => id <= complete).sort((a, b) => a - b);
}

/**
 * Materializes, with flags 0, the rows that idle subscribers of the channel
 * would get from their catch-up for these messages, before an edit or a move
 * changes them: the edit's new mention bits, or a move's rules, then apply to
 * them as to everyone else's (a never-idle twin's rows). Subscriptions joined
 * while idle keep their rows already.
 */
export async function insertIdleRowsOf(q: Q, recipientId: number, messageIds: readonly number[]): Promise<number[]> {
  if (messageIds.length === 0) return [];
  const idle: Array<{ user_id: number; last_active_message_id: number | null }> = await q('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.recipient_id': recipientId, 's.active': true, 's.is_user_long_term_idle': true, 's.is_user_active': true })
    .whereNull('s.idle_since_message_id')
    .select('s.user_id', 'u.last_active_message_id');
  // Rows that exist (kept at send time, or given by an earlier edit) stay as they are, and their
  // users are listed already: only the missing rows are written and listed (ADR 0059).
  const existing = await listExistingPairs(
    q,
    idle.map((u) => Number(u.user_id)),
    messageIds,
  );
  const rows: Array<{ user_id: number; message_id: number; flags: number }> = [];
  for (const u of idle) {
    const after = Number(u.last_active_message_id ?? 0);
    for (const id of messageIds) {
      if (id > after && !existing.has(`${u.user_id}:${id}`)) rows.push({ user_id: Number(u.user_id), message_id: id, flags: 0 });
    }
  }
  // A row written meanwhile (a catch-up committing) is left as it is.
  await insertRows(q, 'user_messages', rows, ['user_id', 'message_id']);
  await addUnlistedReceiversOfRows(q, rows);
  if (rows.length) await insertUnreadRowsOfMessages(q, [...new Set(rows.map((r) => r.message_id))]);
  const users = [...new Set(rows.map((r) => r.user_id))];
  if (users.length) invalidates(q, { kind: 'received', userIds: users });
  return users;
}

/** Locks the user's row: one catch-up chunk of a user at a time across processes (a no-op on SQLite, whose writers are serial anyway). */
export async function lockUserForCatchUp(q: Q, userId: number): Promise<void> {
  if (dialectOf(q as Knex) === 'mysql') await q('users').where('id', userId).forUpdate().first('id');
}

/** Moves the user's catch-up marker (never back). */
export async function setLastActiveMessageId(q: Q, userId: number, messageId: number): Promise<void> {
  await q('users').where('id', userId).where('last_active_message_id', '<', messageId).update({ last_active_message_id: messageId });
}

/** Records a user's second catch-up pass (there is none pending: a user with one is never marked idle). */
export async function insertSoftReactivation(q: Q, userId: number, fromMessageId: number, dueTime: number): Promise<void> {
  await insertRows(q, 'soft_reactivations', [{ user_id: userId, from_message_id: fromMessageId, due_time: dueTime }], ['user_id']);
}

/** Drops a pending second pass without running it. */
export async function deleteSoftReactivation(q: Q, userId: number): Promise<void> {
  await q('soft_reactivations').where('user_id', userId).del();
}

/** Second passes due by `now`, oldest first. */
export async function listDueSoftReactivations(q: Q, now: number, limit: number): Promise<Array<{ userId: number; from: number }>> {
  const rows: Array<{ user_id: number; from_message_id: number }> = await q('soft_reactivations')
    .where('due_time', '<=', now)
    .orderBy('due_time')
    .limit(limit)
    .select('user_id', 'from_message_id');
  return rows.map((r) => ({ userId: Number(r.user_id), from: Number(r.from_message_id) }));
}

/** A finished second pass: the user's spans, idle_since values and pending row go; nothing about their idle time is left. */
export async function finishSoftReactivation(q: Q, userId: number): Promise<void> {
  await q('idle_subscription_spans').where('user_id', userId).del();
  await q('subscriptions').where('user_id', userId).whereNotNull('idle_since_message_id').update({ idle_since_message_id: null });
  await q('soft_reactivations').where('user_id', userId).del();
}
