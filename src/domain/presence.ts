import { ApiError } from '../errors';

/**
 * Zulip's presence protocol constants (its settings' defaults). Clients ping
 * every PING_INTERVAL seconds and show a user offline once both times are
 * older than OFFLINE_THRESHOLD (both also sent in POST /register).
 */
export const PRESENCE_PING_INTERVAL_SECONDS = 60;
export const PRESENCE_OFFLINE_THRESHOLD_SECONDS = 140;
/** A stored time is rewritten at most this often, so several open clients do not write several times a minute. */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/**
 * A user counts as newly online, worth an immediate event, once their last
 * activity is older than this: they missed a couple of pings and other
 * clients may be about to show them offline (140 − 60 − 10 = 70 s).
 */
export const PRESENCE_NEWLY_ONLINE_SECONDS = PRESENCE_OFFLINE_THRESHOLD_SECONDS - PRESENCE_PING_INTERVAL_SECONDS - 10;
/** In the legacy format, "active" when the last activity is at most this much older than the last connection. */
export const PRESENCE_LEGACY_ACTIVE_OFFSET_SECONDS = 70;
/**
 * Beyond this many users who may see a user, no immediate presence events
 * are sent at all: each would reach everyone, and people coming online grow
 * with the organization, so the work is quadratic; clients still learn
 * presence from their minute-by-minute polls.
 */
export const PRESENCE_EVENT_MAX_AUDIENCE = 100;
/** How far back presence is returned when the client does not say (history_limit_days). */
export const PRESENCE_DEFAULT_HISTORY_DAYS = 14;
/**
 * When a user turns presence_enabled off, their presence is rewritten to
 * this long ago: old enough for every client to show them offline, plus a
 * margin for clock skew.
 */
export const PRESENCE_DISABLED_BACKDATE_SECONDS = PRESENCE_OFFLINE_THRESHOLD_SECONDS + 120;

export type PresenceStatus = 'active' | 'idle';

/** POST /users/me/presence's status: Zulip's message names the value sent. */
export function checkPresenceStatus(status: string): PresenceStatus {
  if (status === 'active' || status === 'idle') return status;
  throw new ApiError(`Invalid status: ${status}`);
}

/** A user's stored presence (UNIX seconds; null: never reported). */
export interface PresenceTimes {
  last_active_time: number | null;
  last_connected_time: number | null;
}

/** What a report changes: the new times (undefined: nothing to write) and whether the user just came online. */
export interface PresenceChange {
  times?: PresenceTimes;
  cameOnline: boolean;
}

/**
 * Zulip's rules for one report at `now`: a first report creates the row
 * (connected now, active now if `active`); afterwards each time moves only
 * when it is more than 55 s old, and an active report also moves the
 * connection so that it is never older than the activity. A user is newly
 * online on an active report more than 70 s after their last activity (or
 * their first report).
 */
export function presenceChange(prev: PresenceTimes | undefined, status: PresenceStatus, now: number): PresenceChange {
  const active = status === 'active';
  if (!prev) return { times: { last_active_time: active ? now : null, last_connected_time: now }, cameOnline: true };
  const sinceActive = prev.last_active_time === null ? Infinity : now - prev.last_active_time;
  const sinceConnected = prev.last_connected_time === null ? Infinity : now - prev.last_connected_time;
  const cameOnline = active && sinceActive > PRESENCE_NEWLY_ONLINE_SECONDS;
  const times = { ...prev };
  let changed = false;
  if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
    times.last_connected_time = now;
    changed = true;
  }
  if (active && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
    times.last_active_time = now;
    if (times.last_connected_time === null || now > times.last_connected_time) times.last_connected_time = now;
    changed = true;
  }
  return { times: changed ? times : undefined, cameOnline };
}

/** The modern format; a time never reported reads as the day the user joined. */
export function modernPresence(t: PresenceTimes, dateJoined: number) {
  return { active_timestamp: t.last_active_time ?? dateJoined, idle_timestamp: t.last_connected_time ?? dateJoined };
}

/** The legacy format's one client entry (Zulip names it `website` whatever the client). */
export function legacyPresenceClient(t: PresenceTimes, dateJoined: number) {
  const active = t.last_active_time ?? dateJoined;
  const connected = t.last_connected_time ?? dateJoined;
  const isActive = active + PRESENCE_LEGACY_ACTIVE_OFFSET_SECONDS >= connected;
  return {
    client: 'website' as const,
    status: isActive ? ('active' as const) : ('idle' as const),
    timestamp: isActive ? active : connected,
    pushable: false,
  };
}

/** The legacy format: the `website` entry, and the same as `aggregated` (the most recent client's, in Zulip's words). */
export function legacyPresence(t: PresenceTimes, dateJoined: number) {
  const website = legacyPresenceClient(t, dateJoined);
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}
