import type { Knex } from 'knex';
import { loadRealmGroups } from '../events/register/groups';
import { getRecentlyActive, getRecentlyActiveUserIds, getWeeklyTraffic } from '../queries/channel-stats';
import { nowSeconds } from '../queries/ids';
import { countChannelSubscribers, listChannelSubscribers, listChannelSubscriptions, listRealmChannels } from '../queries/register';
import { toApiSubscription } from '../serializers/subscriptions';
import type { Viewer } from './viewer';

/** Zulip always sends full subscriber lists below this size; above it a partial list may replace them. */
export const FULL_SUBSCRIBER_LIST_LIMIT = 250;

/**
 * GET /users/me/subscriptions: the caller's active subscriptions with every
 * field, traffic and recent activity computed from messages, and subscribers
 * when asked: `true` full lists, `partial` full lists for channels under 250
 * subscribers and, above that, only bots and users active in the last 14
 * days as partial_subscribers. A fixed number of queries.
 */
export async function getSubscriptions(db: Knex, viewer: Viewer, includeSubscribers: 'true' | 'false' | 'partial') {
  const realmId = viewer.user.realm_id;
  const now = nowSeconds();
  const [groups, subs, channels, counts] = await Promise.all([
    loadRealmGroups(db, realmId),
    listChannelSubscriptions(db, viewer.user.id),
    listRealmChannels(db, realmId),
    countChannelSubscribers(db, realmId),
  ]);
  const active = new Map(subs.filter((s) => s.active).map((s) => [s.recipient_id, s]));
  const mine = channels.filter((c) => active.has(c.recipient_id));
  const [traffic, recent, subscribers, activeUsers] = await Promise.all([
    getWeeklyTraffic(db, mine, now),
    getRecentlyActive(db, mine, now),
    includeSubscribers === 'false' ? Promise.resolve(null) : listChannelSubscribers(db, realmId),
    includeSubscribers === 'partial' ? getRecentlyActiveUserIds(db, realmId, now) : Promise.resolve(null),
  ]);
  return mine.map((c) => {
    const all = subscribers?.get(c.recipient_id) ?? [];
    const partial = activeUsers !== null && all.length >= FULL_SUBSCRIBER_LIST_LIMIT;
    const out: Record<string, unknown> = toApiSubscription({ ...c, is_recently_active: recent.get(c.id) ?? false }, active.get(c.recipient_id)!, {
      groups: groups.lookup,
      subscriberCount: counts.get(c.recipient_id) ?? 0,
      subscribers: subscribers && !partial ? all : undefined,
      weeklyTraffic: traffic.get(c.id) ?? null,
    });
    if (partial) out.partial_subscribers = all.filter((id) => activeUsers!.has(id));
    return out;
  });
}
