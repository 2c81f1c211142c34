import type { Knex } from 'knex';
import type { Params } from '../contract';
import { getRecentlyActiveUserIds } from '../queries/channel-stats';
import { listChannelSubscribers } from '../queries/register';
import type { ChannelSubscriberFields } from '../serializers/subscriptions';

/**
 * Below this many subscribers a channel's full list is always sent, even
 * with include_subscribers=partial: the API promises it under 250 (Zulip's
 * own server switches later, at its MIN_PARTIAL_SUBSCRIBERS_CHANNEL_SIZE,
 * which the promise allows).
 */
export const FULL_SUBSCRIBER_LIST_LIMIT = 250;

/**
 * include_subscribers, for GET /users/me/subscriptions (a string) and
 * POST /register (a boolean or "partial"): no lists, full lists, or
 * partial lists for large channels.
 */
export type SubscriberListMode = 'none' | 'full' | 'partial';

export function subscriberListMode(
  value: Params<'get-subscriptions'>['include_subscribers'] | Params<'register-queue'>['include_subscribers'],
): SubscriberListMode {
  if (value === 'partial') return 'partial';
  return value === true || value === 'true' ? 'full' : 'none';
}

export interface SubscriberLists {
  /**
   * `count` is the channel's subscriber_count: the size decides between a
   * full and a partial list, whoever looks. `maySee` is false for a
   * channel whose subscribers the viewer may not list: its list is empty.
   */
  forChannel(recipientId: number, count: number, maySee: boolean): ChannelSubscriberFields;
}

/**
 * The organization's subscriber lists in the requested mode, in at most
 * two statements. A partial list (Zulip's rule, for channels of
 * FULL_SUBSCRIBER_LIST_LIMIT subscribers or more) holds the subscribers
 * who are bots or were active in the last 14 days.
 */
export async function loadSubscriberLists(db: Knex, realmId: number, mode: SubscriberListMode, now: number): Promise<SubscriberLists> {
  if (mode === 'none') return { forChannel: () => ({}) };
  const [lists, recentlyActive] = await Promise.all([
    listChannelSubscribers(db, realmId),
    mode === 'partial' ? getRecentlyActiveUserIds(db, realmId, now) : Promise.resolve(null),
  ]);
  return {
    forChannel(recipientId, count, maySee) {
      const all = maySee ? (lists.get(recipientId) ?? []) : [];
      if (recentlyActive === null || count < FULL_SUBSCRIBER_LIST_LIMIT) return { subscribers: all };
      return { partial_subscribers: all.filter((id) => recentlyActive.has(id)) };
    },
  };
}
