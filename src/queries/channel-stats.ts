import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

const WEEK = 7 * 24 * 3600;
/** Zulip averages traffic over the last 28 days, and has no figure for channels younger than a week. */
const TRAFFIC_WINDOW_DAYS = 28;

/**
 * stream_weekly_traffic: average messages per week over the last four
 * weeks (or since creation when younger), rounded; null for channels
 * created less than a week ago. One grouped query on the
 * (recipient_id, date_sent) index.
 */
export async function getWeeklyTraffic(
  q: Q,
  channels: Array<{ id: number; recipient_id: number; date_created: number }>,
  now: number,
): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>();
  if (channels.length === 0) return out;
  const since = now - TRAFFIC_WINDOW_DAYS * 24 * 3600;
  const rows: Array<{ recipient_id: number; n: number | string }> = await q('messages')
    .whereIn(
      'recipient_id',
      channels.map((c) => c.recipient_id),
    )
    .where('date_sent', '>=', since)
    .groupBy('recipient_id')
    .select('recipient_id')
    .count({ n: '*' });
  const counts = new Map(rows.map((r) => [r.recipient_id, Number(r.n)]));
  for (const c of channels) {
    const age = now - c.date_created;
    if (age < WEEK) {
      out.set(c.id, null);
      continue;
    }
    const weeks = Math.min(TRAFFIC_WINDOW_DAYS * 24 * 3600, age) / WEEK;
    out.set(c.id, Math.round((counts.get(c.recipient_id) ?? 0) / weeks));
  }
  return out;
}

/** Zulip counts a channel as recently active with traffic in the last 180 days (or when it is new). */
const RECENT_ACTIVITY_DAYS = 180;

/**
 * is_recently_active per channel from real message data: the newest send
 * time of each channel, one backward index probe on (recipient_id,
 * date_sent) per channel, in a single statement.
 */
export async function getRecentlyActive(
  q: Q,
  channels: Array<{ id: number; recipient_id: number; date_created: number }>,
  now: number,
): Promise<Map<number, boolean>> {
  const out = new Map<number, boolean>();
  if (channels.length === 0) return out;
  const rows: Array<{ recipient_id: number; last: number | null }> = await q('channels as c')
    .whereIn(
      'c.recipient_id',
      channels.map((c) => c.recipient_id),
    )
    .select(
      'c.recipient_id',
      // Not MAX(): MariaDB reads every index entry of the channel for a correlated MAX (200 ms at 1m);
      // the newest entry of (recipient_id, date_sent) read backwards is one probe.
      q('messages as m')
        .select('m.date_sent')
        .whereRaw('m.recipient_id = c.recipient_id')
        .orderBy('m.date_sent', 'desc')
        .limit(1)
        .as('last'),
    );
  const lastSent = new Map(rows.map((r) => [r.recipient_id, Number(r.last ?? 0)]));
  const cutoff = now - RECENT_ACTIVITY_DAYS * 24 * 3600;
  for (const c of channels) out.set(c.id, (lastSent.get(c.recipient_id) ?? 0) >= cutoff || c.date_created >= now - WEEK);
  return out;
}

/** Users who count as recently active for partial subscriber lists: bots, and anyone active in the last 14 days. */
export async function getRecentlyActiveUserIds(q: Q, realmId: number, now: number): Promise<Set<number>> {
  const since = now - 14 * 24 * 3600;
  const ids: number[] = await q('users')
    .where({ realm_id: realmId, is_active: true })
    .andWhere((b) => b.where('is_bot', true).orWhere('last_active_time', '>=', since))
    .pluck('id');
  return new Set(ids);
}
