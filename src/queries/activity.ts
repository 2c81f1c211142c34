import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';

type Q = Knex | Knex.Transaction;

/** Sets a user's last_active_time to `now` unless it was recorded at or after `notBefore`. */
export async function setLastActiveTime(q: Q, userId: number, now: number, notBefore: number): Promise<void> {
  await q('users')
    .where('id', userId)
    .andWhere((b) => b.whereNull('last_active_time').orWhere('last_active_time', '<', notBefore))
    .update({ last_active_time: now });
  // At most once per user per recording interval (src/actions/activity.ts).
  invalidates(q, { kind: 'user', userIds: [userId] });
}
