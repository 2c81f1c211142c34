import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

const WEEK = 7 * 24 * 3600;
/** Zulip averages traffic over the last 28 days, and has no figure for channels younger than a week. */
const TRAFFIC_WINDOW_DAYS = 28;

/**
 * stream_weekly_traffic: average messages per week over the last four
 * weeks (or since creation when younger), rounded; null for channels
 * created less than a week ago. One grouped query on the
 * (realm_id, date_sent) index.
 */
export async function getWeeklyTraffic(q: Q, channels: Array<{ id: number; recipient_id: number; date_created: number }>, now: number): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>();
  if (channels.length === 0) return out;
  const since = now - TRAFFIC_WINDOW_DAYS * 24 * 3600;
  const rows: Array<{ recipient_id: number; n: number }> = await q('messages')
    .whereIn('recipient_id', channels.map((c) => c.recipient_id))
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
