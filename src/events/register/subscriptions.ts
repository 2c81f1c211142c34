import type { Knex } from 'knex';
import type { Data, Schema } from '../../contract';
import { withActivity } from '../../access/channels';
import { loadSubscriberLists, SubscriberListMode } from '../../access/subscriber-lists';
import { canSeeChannel, Viewer } from '../../access/viewer';
import { isAdminRole, isGuestRole } from '../../domain/roles';
import { parseSettings } from '../../domain/user-settings';
import type { ChannelRow } from '../../queries/channels';
import { nowSeconds } from '../../queries/ids';
import { countChannelSubscribers, listRealmChannels, SubscriptionSettings } from '../../queries/register';
import { ChannelViewOptions, GroupLookup, toApiBasicChannel, toApiSubscription } from '../../serializers/subscriptions';

const byName = <T extends { name: string }>(list: T[]) => list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** The organization's channels with their active subscriber counts and weekly traffic, as the channel objects need them. */
export interface RealmChannels {
  channels: ChannelRow[];
  counts: Map<number, number>;
  traffic: Map<number, number | null>;
}

/**
 * Read once for every part of the state that lists channels (subscription,
 * stream, default_streams): four statements, whatever the number of
 * channels. is_recently_active comes from the channels' messages, as GET
 * /streams computes it (the stored column is only the value a new channel
 * starts with): clients order and demote channels by it since level 323.
 */
export async function loadRealmChannels(db: Knex, realmId: number): Promise<RealmChannels> {
  const [rows, counts] = await Promise.all([listRealmChannels(db, realmId), countChannelSubscribers(db, realmId)]);
  return { ...(await withActivity(db, rows, nowSeconds())), counts };
}

/** The keys of POST /register's state that the `subscription` event type owns. */
export type SubscriptionState = Required<Pick<Data<'register-queue'>, 'subscriptions' | 'unsubscribed' | 'never_subscribed'>>;

export interface SubscriptionStateOptions {
  includeSubscribers: SubscriberListMode;
  archivedChannels: boolean;
  notificationSettingsNull: boolean;
}

/** Without the notification_settings_null capability, Zulip fills "inherit" (null) with the user's own setting. */
function withInheritedNotifications(sub: SubscriptionSettings, settingsJson: string): SubscriptionSettings {
  const s = parseSettings(settingsJson);
  return {
    ...sub,
    desktop_notifications: sub.desktop_notifications ?? s.enable_stream_desktop_notifications,
    audible_notifications: sub.audible_notifications ?? s.enable_stream_audible_notifications,
    push_notifications: sub.push_notifications ?? s.enable_stream_push_notifications,
    email_notifications: sub.email_notifications ?? s.enable_stream_email_notifications,
    wildcard_mentions_notify: sub.wildcard_mentions_notify ?? s.wildcard_mentions_notify,
  };
}

/**
 * The `subscription` part: subscriptions (active), unsubscribed (left) and
 * never_subscribed (channels the user can see and join, or, for
 * administrators, private ones they can see), each sorted by name as Zulip's
 * gather_subscriptions_helper does.
 * Archived channels only for clients with the archived_channels capability.
 * Subscriber lists as GET /users/me/subscriptions sends them
 * (src/access/subscriber-lists.ts), empty where the viewer may not list them.
 */
export async function subscriptionState(
  db: Knex,
  viewer: Viewer,
  groups: GroupLookup,
  subs: SubscriptionSettings[],
  realmChannels: Promise<RealmChannels>,
  o: SubscriptionStateOptions,
): Promise<SubscriptionState> {
  const [{ channels, counts, traffic }, subscribers] = await Promise.all([
    realmChannels,
    loadSubscriberLists(db, viewer.user.realm_id, o.includeSubscribers, nowSeconds()),
  ]);
  const subByRecipient = new Map(subs.map((s) => [s.recipient_id, s]));
  // Subscriber lists of private channels are for their subscribers and administrators; guests see only their own channels'.
  const maySeeSubscribers = (c: ChannelRow, subscribed: boolean) =>
    subscribed || (!c.invite_only && !isGuestRole(viewer.user.role)) || (c.invite_only && isAdminRole(viewer.user.role));
  const view = (c: ChannelRow, subscribed: boolean): ChannelViewOptions => {
    const count = counts.get(c.recipient_id) ?? 0;
    return {
      groups,
      subscriberCount: count,
      weeklyTraffic: traffic.get(c.id) ?? null,
      ...subscribers.forChannel(c.recipient_id, count, maySeeSubscribers(c, subscribed)),
    };
  };

  const subscriptions: Array<Schema<'Subscription'>> = [];
  const unsubscribed: Array<Schema<'Subscription'>> = [];
  const neverSubscribed: Array<Schema<'BasicChannel'>> = [];
  for (const c of channels) {
    if (c.deactivated && !o.archivedChannels) continue;
    const sub = subByRecipient.get(c.recipient_id);
    if (sub) {
      const settings = o.notificationSettingsNull ? sub : withInheritedNotifications(sub, viewer.user.settings);
      (sub.active ? subscriptions : unsubscribed).push(toApiSubscription(c, settings, view(c, sub.active)));
    } else if (canSeeChannel(viewer, c)) {
      neverSubscribed.push(toApiBasicChannel(c, view(c, false)));
    }
  }
  return { subscriptions: byName(subscriptions), unsubscribed: byName(unsubscribed), never_subscribed: byName(neverSubscribed) };
}
