import type { Schema } from '../contract';
import type { Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';
import { loadRealmGroups } from '../access/realm-groups';
import { isAdminRole, isGuestRole } from '../domain/roles';
import { ChannelRow, getChannelById } from '../queries/channels';
import { ActiveUserRole, listActiveUserRoles, listSubscriberIdsByRecipient } from '../queries/audiences';
import { countChannelSubscribers, listChannelSubscriptions } from '../queries/register';
import {
  ChannelViewOptions,
  toApiBasicChannel,
  toApiStreamCreateEvent,
  toApiSubscription,
  toApiSubscriptionAddEvent,
  toApiSubscriptionPeerEvent,
  toApiSubscriptionRemoveEvent,
} from '../serializers/subscriptions';

/**
 * Who hears about a channel's metadata and membership: for a public channel
 * every active user but guests who are not subscribed; for a private one its
 * subscribers and the organization's administrators.
 */
const hearsAbout = (c: ChannelRow, u: ActiveUserRole, subscribers: ReadonlySet<number>) =>
  subscribers.has(u.id) || (c.invite_only ? isAdminRole(u.role) : !isGuestRole(u.role));

export async function channelAudience(tx: Tx, c: ChannelRow): Promise<number[]> {
  const [users, subscribers] = await Promise.all([
    listActiveUserRoles(tx.trx, c.realm_id),
    listSubscriberIdsByRecipient(tx.trx, [c.recipient_id]),
  ]);
  const subs = subscribers.get(c.recipient_id) ?? new Set<number>();
  return users.filter((u) => hearsAbout(c, u, subs)).map((u) => u.id);
}

async function channelViews(tx: Tx, channelId: number, realmId: number): Promise<{ channel: ChannelRow; view: ChannelViewOptions }> {
  const channel = (await getChannelById(tx.trx, realmId, channelId))!;
  const [groups, counts] = await Promise.all([loadRealmGroups(tx.trx, realmId), countChannelSubscribers(tx.trx, realmId)]);
  const view = { groups: groups.lookup, subscriberCount: counts.get(channel.recipient_id) ?? 0 };
  return { channel, view };
}

/** stream create, for a channel made in this transaction; published after commit. */
export async function queueChannelCreated(tx: Tx, bus: EventBus, realmId: number, channelId: number): Promise<void> {
  const { channel, view } = await channelViews(tx, channelId, realmId);
  const audience = await channelAudience(tx, channel);
  const event = toApiStreamCreateEvent([toApiBasicChannel(channel, view)]);
  tx.afterCommit(() => bus.publish({ event, userIds: audience }));
}

/**
 * subscription add (each new subscriber gets their own subscription object)
 * and peer_add (everyone else who can see the channel learns who joined).
 */
export async function queueSubscribed(tx: Tx, bus: EventBus, realmId: number, channelId: number, added: number[]): Promise<void> {
  if (added.length === 0) return;
  const { channel, view } = await channelViews(tx, channelId, realmId);
  for (const userId of added) {
    const sub = (await listChannelSubscriptions(tx.trx, userId)).find((s) => s.recipient_id === channel.recipient_id)!;
    const event = toApiSubscriptionAddEvent([toApiSubscription(channel, sub, view)]);
    tx.afterCommit(() => bus.publish({ event, userIds: [userId] }));
  }
  const others = (await channelAudience(tx, channel)).filter((id) => !added.includes(id));
  const peerEvent = toApiSubscriptionPeerEvent('peer_add', [channel.id], added);
  tx.afterCommit(() => bus.publish({ event: peerEvent, userIds: others }));
}

/** subscription remove to those who left, peer_remove to the rest of the audience. */
export async function queueUnsubscribed(tx: Tx, bus: EventBus, channel: ChannelRow, removed: number[]): Promise<void> {
  if (removed.length === 0) return;
  for (const userId of removed) {
    const event = toApiSubscriptionRemoveEvent(channel);
    tx.afterCommit(() => bus.publish({ event, userIds: [userId] }));
  }
  const others = (await channelAudience(tx, channel)).filter((id) => !removed.includes(id));
  const peerEvent = toApiSubscriptionPeerEvent('peer_remove', [channel.id], removed);
  tx.afterCommit(() => bus.publish({ event: peerEvent, userIds: others }));
}

/**
 * peer_add or peer_remove for one user joining or leaving several channels
 * at once without a subscription change of their own: reactivation and
 * deactivation (subscriber lists hold active users only). The channel's
 * audience hears of it; channels with the same audience share one event.
 * Two statements whatever the number of channels.
 */
export async function queuePeerChange(
  tx: Tx,
  bus: EventBus,
  op: Schema<'SubscriptionPeerEvent'>['op'],
  realmId: number,
  userId: number,
  channels: ChannelRow[],
): Promise<void> {
  if (channels.length === 0) return;
  const [users, subscribers] = await Promise.all([
    listActiveUserRoles(tx.trx, realmId),
    listSubscriberIdsByRecipient(
      tx.trx,
      channels.map((c) => c.recipient_id),
    ),
  ]);
  const byAudience = new Map<string, { audience: number[]; streamIds: number[] }>();
  for (const c of channels) {
    const subs = subscribers.get(c.recipient_id) ?? new Set<number>();
    const audience = users.filter((u) => u.id !== userId && hearsAbout(c, u, subs)).map((u) => u.id);
    if (audience.length === 0) continue;
    const key = audience.join(',');
    const entry = byAudience.get(key);
    if (entry) entry.streamIds.push(c.id);
    else byAudience.set(key, { audience, streamIds: [c.id] });
  }
  for (const { audience, streamIds } of byAudience.values()) {
    const event = toApiSubscriptionPeerEvent(op, streamIds, [userId]);
    tx.afterCommit(() => bus.publish({ event, userIds: audience }));
  }
}
