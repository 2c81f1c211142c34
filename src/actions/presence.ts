import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import {
  checkPresenceStatus,
  legacyPresenceClient,
  modernPresence,
  PRESENCE_DISABLED_BACKDATE_SECONDS,
  PRESENCE_EVENT_MAX_AUDIENCE,
  presenceChange,
  PresenceStatus,
  PresenceTimes,
} from '../domain/presence';
import { checkHumanUser } from '../domain/push-tokens';
import { parseSettings } from '../domain/user-settings';
import { getRealmPresence } from '../access/presence';
import type { Caller } from '../access/viewer';
import type { EventBody } from '../events/bus';
import { getPresenceForReport, writePresence } from '../queries/presence';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';

/**
 * POST /users/me/presence. Users who turned presence_enabled off are not
 * recorded (their stored presence stays as the switch left it: offline).
 * With ping_only the answer is empty; otherwise it carries the
 * organization's presence.
 */
export async function doUpdatePresence(ctx: AppContext, viewer: Caller, p: Params<'update-presence'>): Promise<Data<'update-presence'>> {
  const { user } = viewer;
  checkHumanUser(user);
  const status = checkPresenceStatus(p.status);
  const nowMs = ctx.clock.now();
  const presenceDisabled = parseSettings(user.settings).presence_enabled
    ? await recordPresence(ctx, user, status, Math.floor(nowMs / 1000))
    : undefined;
  if (p.ping_only) return {};
  // Sending last_update_id means the client speaks the modern protocol, whatever slim_presence says.
  const slim = (p.slim_presence ?? false) || p.last_update_id !== undefined;
  const query = { slim, lastUpdateId: p.last_update_id, historyLimitDays: p.history_limit_days, presenceDisabled };
  return getRealmPresence(ctx.db, viewer, query, nowMs / 1000);
}

/**
 * Records one report. The common case — a ping within 55 s of the last
 * write — is the one read and nothing else: no write, no event. A change is
 * one transaction: the organization's next update id and one upsert of the
 * user's row. An event goes out only when the user comes online (or on
 * their first report), not on every ping. Returns the organization's
 * presence_disabled, read on the way.
 */
async function recordPresence(ctx: AppContext, user: UserRow, status: PresenceStatus, now: number): Promise<boolean> {
  const { presenceDisabled, times } = await getPresenceForReport(ctx.db, user.realm_id, user.id);
  const change = presenceChange(times, status, now);
  if (!change.times) return presenceDisabled;
  const written = change.times;
  await inTransaction(ctx.db, (tx) => writePresence(tx.trx, user.realm_id, user.id, written));
  if (change.cameOnline && !presenceDisabled) await publishPresence(ctx, user, written, false);
  return presenceDisabled;
}

/**
 * Turning presence_enabled on records the user active now; turning it off
 * rewrites their presence to a moment long enough ago that every client
 * shows them offline (and the user is no longer recorded while it stays
 * off). Either way the users who may know them are told at once, whatever
 * the organization's size. For the settings change that flips it.
 */
export async function doPresenceEnabledChanged(ctx: AppContext, user: UserRow, enabled: boolean): Promise<void> {
  const now = Math.floor(ctx.clock.now() / 1000);
  const times: PresenceTimes = enabled
    ? { last_active_time: now, last_connected_time: now }
    : { last_active_time: null, last_connected_time: now - PRESENCE_DISABLED_BACKDATE_SECONDS };
  await inTransaction(ctx.db, (tx) => writePresence(tx.trx, user.realm_id, user.id, times));
  await publishPresence(ctx, user, times, true);
}

/**
 * The presence event, to the users who may know this one. Published in the
 * legacy form (the mobile app reads it); each queue reshapes it for
 * slim_presence and simplified_presence_events (src/events/shape.ts), from
 * the modern form carried beside it.
 */
async function publishPresence(ctx: AppContext, user: UserRow, times: PresenceTimes, force: boolean): Promise<void> {
  const userIds = await listUsersWhoMayAccess(ctx.db, user.realm_id, user.id);
  if (userIds.length > PRESENCE_EVENT_MAX_AUDIENCE && !force) return;
  const event: EventBody<Schema<'PresenceEvent'>> = {
    type: 'presence',
    user_id: user.id,
    email: user.email,
    server_timestamp: ctx.clock.now() / 1000,
    presence: { website: legacyPresenceClient(times, user.date_joined) },
  };
  const modern = modernPresence(times, user.date_joined);
  ctx.bus.publish({ event, userIds, perUser: () => ({ modern }) });
}
