import type { Knex } from 'knex';
import type { Data, Params } from '../contract';
import type { AppContext } from '../context';
import { legacyPresence, modernPresence, PRESENCE_DEFAULT_HISTORY_DAYS, PRESENCE_OFFLINE_THRESHOLD_SECONDS } from '../domain/presence';
import { ApiError, noSuchUser } from '../errors';
import { getUserPresence, isPresenceDisabled, listRealmPresence, PresenceListRow } from '../queries/presence';
import { listUserIdsSharingRecipients } from '../queries/register';
import { getUserByApiEmail, getUserInRealm } from '../queries/users';
import { inGroup, Caller } from './viewer';

type PresenceMap = NonNullable<Data<'update-presence'>['presences']>;

/**
 * The users whose presence the viewer may see, or null for everyone: as for
 * user objects (Zulip limits presence the same way), members of
 * can_access_all_users_group see all, anyone else themselves and the people
 * they share a channel or conversation with.
 */
export async function presenceAudienceOf(db: Knex, viewer: Caller): Promise<Set<number> | null> {
  const realm = viewer.realm;
  if (inGroup(viewer, realm.can_access_all_users_group)) return null;
  return new Set([viewer.user.id, ...(await listUserIdsSharingRecipients(db, viewer.user.id))]);
}

export interface PresenceQuery {
  /** Key by user ID in the modern format; by email in the legacy one otherwise. */
  slim: boolean;
  /** The client's presence_last_update_id: only rows changed since. */
  lastUpdateId?: number;
  historyLimitDays?: number;
  /** The organization's presence_disabled, when the caller has just read it. */
  presenceDisabled?: boolean;
}

/**
 * The organization's presence as the viewer may see it, with the update id
 * to send next time (Zulip's get_presence_response). `now` in seconds.
 */
export async function getRealmPresence(
  db: Knex,
  viewer: Caller,
  q: PresenceQuery,
  now: number,
): Promise<{ presences: PresenceMap; presence_last_update_id: number; server_timestamp: number }> {
  const server_timestamp = now;
  const nowSeconds = Math.floor(now);
  const presences: PresenceMap = {};
  const empty = { presences, presence_last_update_id: -1, server_timestamp };
  if (q.presenceDisabled ?? (await isPresenceDisabled(db, viewer.user.realm_id))) return empty;
  const days = q.historyLimitDays ?? PRESENCE_DEFAULT_HISTORY_DAYS;
  let rows: PresenceListRow[] = [];
  // history_limit_days 0: the client wants nobody's presence.
  if (days > 0) {
    // A client that already holds data (a positive update id) gets every change since, however old.
    const connectedSince = q.lastUpdateId === undefined || q.lastUpdateId <= 0 ? nowSeconds - days * 86_400 : undefined;
    const [all, audience] = await Promise.all([
      listRealmPresence(db, viewer.user.realm_id, { afterUpdateId: q.lastUpdateId, connectedSince }),
      presenceAudienceOf(db, viewer),
    ]);
    rows = audience === null ? all : all.filter((r) => audience.has(r.user_id));
  }
  for (const r of rows) {
    if (q.slim) presences[String(r.user_id)] = modernPresence(r, r.date_joined);
    else presences[r.email] = legacyPresence(r, r.date_joined);
  }
  // With no row, the client's own id is still current; without one, -1 says nothing was fetched.
  const presence_last_update_id = rows.length > 0 ? Math.max(...rows.map((r) => r.last_update_id)) : (q.lastUpdateId ?? -1);
  return { presences, presence_last_update_id, server_timestamp };
}

/** GET /realm/presence: the legacy format, as the old clients and bots that use it read it. */
export async function getPresence(ctx: AppContext, viewer: Caller): Promise<Data<'get-presence'>> {
  const { presences, server_timestamp } = await getRealmPresence(ctx.db, viewer, { slim: false }, ctx.clock.now() / 1000);
  const legacy: Data<'get-presence'>['presences'] = {};
  for (const [email, p] of Object.entries(presences)) if ('website' in p) legacy[email] = p;
  return { presences: legacy, server_timestamp };
}

/**
 * GET /users/{user_id_or_email}/presence. A number is an ID, anything else
 * an email. Every user the caller cannot reach (unknown, deactivated,
 * another organization's, or one a limited guest may not know) is "No such
 * user"; bots have no presence; a user who never reported is "No presence
 * data for <what was asked>".
 *
 * The answer has Zulip's shape of feature level 497: the modern times
 * beside the legacy entries (which lose their client and pushable keys) and
 * the server's time. Zulip sent only the legacy entries before level 487
 * and only the modern times from 487 to 496, so this one shape serves
 * clients of every level.
 */
export async function getUserPresenceOf(
  ctx: AppContext,
  viewer: Caller,
  p: Params<'get-user-presence'>,
): Promise<Data<'get-user-presence'>> {
  const key = p.user_id_or_email;
  const realmId = viewer.user.realm_id;
  const target = /^\d+$/.test(key)
    ? Number(key) <= 2 ** 31 - 1
      ? await getUserInRealm(ctx.db, realmId, Number(key))
      : undefined
    : await getUserByApiEmail(ctx.db, realmId, key);
  if (!target || !target.is_active) throw noSuchUser();
  if (target.is_bot) throw new ApiError('Presence is not supported for bot users.');
  const audience = await presenceAudienceOf(ctx.db, viewer);
  if (audience !== null && !audience.has(target.id)) throw noSuchUser();
  const row = await getUserPresence(ctx.db, target.id);
  if (!row) throw new ApiError(`No presence data for ${key}`);
  const { website } = legacyPresence(row, row.date_joined);
  const server_timestamp = ctx.clock.now() / 1000;
  const offline = Math.floor(server_timestamp) - website.timestamp > PRESENCE_OFFLINE_THRESHOLD_SECONDS;
  return {
    presence: {
      ...modernPresence(row, row.date_joined),
      aggregated: { status: offline ? 'offline' : website.status, timestamp: website.timestamp },
      website: { status: website.status, timestamp: website.timestamp },
    },
    server_timestamp,
  };
}
