import type { Knex } from 'knex';
import { insertIgnoreInto } from '../db/connection';

type Q = Knex | Knex.Transaction;

/** 1,000 ids a statement. */
const CHUNK = 1000;

/** Records that these users' phones were told of the message (migration 039); a row already there stays. */
export async function recordActivePushNotifications(q: Q, messageId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  const values = userIds.map(() => '(?, ?)').join(', ');
  await q.raw(
    `${insertIgnoreInto(q)} active_push_notifications (user_id, message_id) VALUES ${values}`,
    userIds.flatMap((u) => [u, messageId]),
  );
}

/**
 * Of the user's shown notifications, those of `messageIds` (all of them when
 * null), removed as they are returned: the caller sends the removal.
 */
export async function takeActivePushNotifications(q: Q, userId: number, messageIds: readonly number[] | null): Promise<number[]> {
  const found: number[] = [];
  const slices = messageIds === null ? [null] : chunks(messageIds);
  for (const slice of slices) {
    const query = q('active_push_notifications').where('user_id', userId);
    if (slice) query.whereIn('message_id', slice);
    const ids = (await query.clone().pluck('message_id')).map(Number);
    if (ids.length === 0) continue;
    await q('active_push_notifications').where('user_id', userId).whereIn('message_id', ids).delete();
    found.push(...ids);
  }
  return found;
}

/** The shown notifications of these messages, by user, removed as they are returned. */
export async function takeActivePushNotificationsOfMessages(q: Q, messageIds: readonly number[]): Promise<Map<number, number[]>> {
  const byUser = new Map<number, number[]>();
  for (const slice of chunks(messageIds)) {
    const rows = (await q('active_push_notifications').whereIn('message_id', slice).select('user_id', 'message_id')) as Array<{
      user_id: unknown;
      message_id: unknown;
    }>;
    if (rows.length === 0) continue;
    await q('active_push_notifications').whereIn('message_id', slice).delete();
    for (const r of rows) {
      const userId = Number(r.user_id);
      const mine = byUser.get(userId);
      if (mine) mine.push(Number(r.message_id));
      else byUser.set(userId, [Number(r.message_id)]);
    }
  }
  return byUser;
}

function chunks(ids: readonly number[]): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < ids.length; i += CHUNK) out.push(ids.slice(i, i + CHUNK));
  return out;
}
