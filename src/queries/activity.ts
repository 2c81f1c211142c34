import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

/** Sets a user's last_active_time to `now` unless it was recorded at or after `notBefore`. */
export async function setLastActiveTime(q: Q, userId: number, now: number, notBefore: number): Promise<void> {
  await q('users')
    .where('id', userId)
    .andWhere((b) => b.whereNull('last_active_time').orWhere('last_active_time', '<', notBefore))
    .update({ last_active_time: now });
  // No invalidation, deliberately: last_active_time is read only by SQL (the
  // partial subscriber lists), never from a cached user row, and dropping the
  // caller at the first request of every hour would buy nothing.
}
