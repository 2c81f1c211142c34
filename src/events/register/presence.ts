import type { Knex } from 'knex';
import type { AppContext } from '../../context';
import { getRealmPresence } from '../../access/presence';
import { listUserStatuses } from '../../access/user-status';
import type { Caller } from '../../access/viewer';
import type { StatePart } from './types';

/** `presence`: the organization's presence as POST /users/me/presence answers it, with its update id. */
export async function presenceState(
  ctx: AppContext,
  viewer: Caller,
  o: { slim: boolean; historyLimitDays?: number },
): Promise<StatePart<'presences' | 'presence_last_update_id' | 'server_timestamp'>> {
  return getRealmPresence(ctx.db, viewer, { slim: o.slim, historyLimitDays: o.historyLimitDays }, ctx.clock.now() / 1000);
}

/** `user_status`: every status set, keyed by user ID. */
export async function userStatusState(db: Knex, viewer: Caller): Promise<StatePart<'user_status'>> {
  return { user_status: await listUserStatuses(db, viewer) };
}
