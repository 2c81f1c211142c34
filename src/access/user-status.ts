import type { Knex } from 'knex';
import type { Data, Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { parseSettings } from '../domain/user-settings';
import { ApiError, noSuchUser } from '../errors';
import { getUserStatusRow, listRealmUserStatuses, UserStatusRow } from '../queries/user-status';
import { getUserInRealm } from '../queries/users';
import { presenceAudienceOf } from './presence';
import type { Caller } from './viewer';

type UserStatus = Schema<'UserStatus'>;
const REACTION_TYPES: ReadonlyArray<Schema<'ReactionType'>> = ['unicode_emoji', 'realm_emoji', 'zulip_extra_emoji', 'service_extra_emoji'];

/**
 * A status as clients read it: only what is set. `away` (deprecated) is
 * presence_enabled turned off, as Zulip derives it since feature level 148.
 */
export function toApiUserStatus(row: UserStatusRow): UserStatus {
  const out: UserStatus = {};
  if (!parseSettings(row.settings).presence_enabled) out.away = true;
  if (row.status_text) out.status_text = row.status_text;
  if (row.emoji_name) {
    out.emoji_name = row.emoji_name;
    out.emoji_code = row.emoji_code;
    const type = REACTION_TYPES.find((t) => t === row.reaction_type);
    if (type) out.reaction_type = type;
  }
  return out;
}

/** POST /register's user_status: users with anything set, keyed by ID, limited to those the viewer may know. */
export async function listUserStatuses(db: Knex, viewer: Caller): Promise<Record<string, UserStatus>> {
  const [rows, audience] = await Promise.all([listRealmUserStatuses(db, viewer.user.realm_id), presenceAudienceOf(db, viewer)]);
  const out: Record<string, UserStatus> = {};
  for (const row of rows) {
    if (audience !== null && !audience.has(row.user_id)) continue;
    const status = toApiUserStatus(row);
    if (Object.keys(status).length > 0) out[String(row.user_id)] = status;
  }
  return out;
}

/**
 * GET /users/{user_id}/status (feature level 262), with Zulip's
 * access_user_by_id answers: unknown IDs, other organizations' users and
 * bots are "No such user", deactivated users "User is deactivated", a user
 * a limited guest may not know "Insufficient permission".
 */
export async function getUserStatus(ctx: AppContext, viewer: Caller, p: Params<'get-user-status'>): Promise<Data<'get-user-status'>> {
  const target = await getUserInRealm(ctx.db, viewer.user.realm_id, p.user_id);
  if (!target || target.is_bot) throw noSuchUser();
  if (!target.is_active) throw new ApiError('User is deactivated');
  const audience = await presenceAudienceOf(ctx.db, viewer);
  if (audience !== null && !audience.has(target.id)) throw new ApiError('Insufficient permission');
  const row = await getUserStatusRow(ctx.db, target.id);
  return { status: row ? toApiUserStatus(row) : {} };
}
