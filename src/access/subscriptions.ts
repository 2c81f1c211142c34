import type { Knex } from 'knex';
import type { Schema } from '../contract';
import { loadRealmGroups } from './realm-groups';
import { withActivity } from './channels';
import { nowSeconds } from '../queries/ids';
import { countChannelSubscribers, listChannelSubscriptions, listRealmChannels } from '../queries/register';
import { toApiSubscription } from '../serializers/subscriptions';
import { loadSubscriberLists, SubscriberListMode } from './subscriber-lists';
import type { Viewer } from './viewer';

/**
 * GET /users/me/subscriptions: the caller's active subscriptions with every
 * field, traffic and recent activity computed from messages, and subscriber
 * lists when asked (src/access/subscriber-lists.ts, shared with POST
 * /register). A fixed number of queries.
 */
export async function getSubscriptions(
  db: Knex,
  viewer: Viewer,
  includeSubscribers: SubscriberListMode,
): Promise<Array<Schema<'Subscription'>>> {
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
  const [{ channels: withStats, traffic }, subscribers] = await Promise.all([
    withActivity(db, mine, now),
    loadSubscriberLists(db, realmId, includeSubscribers, now),
  ]);
  return withStats.map((c) => {
    const count = counts.get(c.recipient_id) ?? 0;
    return toApiSubscription(c, active.get(c.recipient_id)!, {
      groups: groups.lookup,
      subscriberCount: count,
      // Subscribers always may list their channel's subscribers.
      ...subscribers.forChannel(c.recipient_id, count, true),
      weeklyTraffic: traffic.get(c.id) ?? null,
    });
  });
}
