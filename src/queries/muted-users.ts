import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { invalidates } from '../db/invalidations';
import { insertOne } from './ids';
import { getUnreadHorizon, READ, sideRowsAtOrBelow } from './unread';

type Q = Knex | Knex.Transaction;

/** One user muted by another (Zulip's MutedUser). */
export interface MuteRow {
  muted_user_id: number;
  date_muted: number;
}

/*
 * Who muted a user is cached per node by the muted user's id (every send
 * reads it for its sender: src/cache/muting-users.ts). A write declares a
 * `user` invalidation of the muted user: the relation is part of what the
 * caches hold about that user, and the invalidation reaches every node
 * before the change's events.
 */

/** The users `userId` muted, in the order they were muted (Zulip's get_user_mutes). */
export async function listMutedUsers(q: Q, userId: number): Promise<MuteRow[]> {
  const rows = await q('muted_users').where({ user_id: userId }).orderBy('id').select('muted_user_id', 'date_muted');
  return rows.map((r) => ({ muted_user_id: Number(r.muted_user_id), date_muted: Number(r.date_muted) }));
}

/**
 * Locks the muting user's row until the transaction ends on MySQL, so that
 * two requests muting the same user check and insert one after the other
 * (the second answers "User already muted", not a duplicate key); SQLite's
 * one writer already serialises them.
 */
export async function lockMuter(trx: Knex.Transaction, userId: number): Promise<void> {
  if (dialectOf(trx) === 'mysql') await trx('users').where({ id: userId }).forUpdate().first('id');
}

/** Whether `userId` muted `mutedUserId`. */
export async function isMuted(q: Q, userId: number, mutedUserId: number): Promise<boolean> {
  return (await q('muted_users').where({ user_id: userId, muted_user_id: mutedUserId }).first('id')) !== undefined;
}

/** The users who muted `mutedUserId`, deactivated ones included (Zulip's get_muting_users). */
export async function listMutingUserIds(q: Q, mutedUserId: number): Promise<number[]> {
  const ids = await q('muted_users').where({ muted_user_id: mutedUserId }).pluck('user_id');
  return ids.map(Number);
}

export async function insertMute(q: Q, userId: number, mutedUserId: number, dateMuted: number): Promise<void> {
  await insertOne(q, 'muted_users', { user_id: userId, muted_user_id: mutedUserId, date_muted: dateMuted });
  invalidates(q, { kind: 'user', userIds: [mutedUserId] });
}

/** Removes the mute; whether there was one. */
export async function deleteMute(q: Q, userId: number, mutedUserId: number): Promise<boolean> {
  const n = await q('muted_users').where({ user_id: userId, muted_user_id: mutedUserId }).delete();
  if (n > 0) invalidates(q, { kind: 'user', userIds: [mutedUserId] });
  return n > 0;
}

/**
 * The user's unread messages sent by `senderId`, ascending: above the
 * user's unread horizon by their rows, at or below it through the unread
 * side table (ADR 0024), as every unread read does.
 */
export async function listUnreadFromSender(q: Q, userId: number, senderId: number): Promise<number[]> {
  const horizon = await getUnreadHorizon(q, userId);
  const above = await q('user_messages as um')
    .join('messages as m', 'm.id', 'um.message_id')
    .where('um.user_id', userId)
    .where('um.message_id', '>', horizon)
    .where('m.sender_id', senderId)
    .whereRaw('(um.flags & ?) = 0', [READ])
    .pluck('um.message_id');
  const below =
    horizon > 0
      ? await sideRowsAtOrBelow(q, userId, horizon)
          .join('messages as m', 'm.id', 'uu.message_id')
          .where('m.sender_id', senderId)
          .whereRaw('(um.flags & ?) = 0', [READ])
          .pluck('uu.message_id')
      : [];
  return [...new Set([...below, ...above].map(Number))].sort((a, b) => a - b);
}
