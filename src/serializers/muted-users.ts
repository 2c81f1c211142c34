import type { Schema } from '../contract';
import type { MuteRow } from '../queries/muted-users';

/** register's muted_users and the muted_users event's list (Zulip's get_user_mutes). */
export const toApiMutedUsers = (rows: readonly MuteRow[]): Array<Schema<'MutedUser'>> =>
  rows.map((r) => ({ id: r.muted_user_id, timestamp: r.date_muted }));
