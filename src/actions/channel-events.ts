import type { Schema } from '../contract';
import type { Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';
import type { EventBody } from '../events/bus';
import { loadRealmGroups } from '../access/realm-groups';
import { isAdminRole, isGuestRole } from '../domain/roles';
import { ChannelRow, getChannelById, listDefaultChannelIds } from '../queries/channels';
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

/** The value of a stream update event: whatever the contract lets one property carry. */
export type ChannelUpdateValue = Schema<'StreamUpdateEvent'>['value'];

/**
 * stream update for one property, to everyone who hears about the channel
 * as it is after the change (channelAudience, read in the transaction);
 * `extra` carries the fields Zulip sends beside some properties
 * (rendered_description, or the other two privacy fields with
 * invite_only). `name` is the channel's name before the change.
 */
export async function queueChannelUpdate(
  tx: Tx,
  bus: EventBus,
  channel: ChannelRow,
  property: string,
  value: ChannelUpdateValue,
  extra: Pick<Schema<'StreamUpdateEvent'>, 'rendered_description' | 'history_public_to_subscribers' | 'is_web_public'> = {},
  audience?: number[],
): Promise<void> {
  const userIds = audience ?? (await channelAudience(tx, channel));
  const event: EventBody<Schema<'StreamUpdateEvent'>> = {
    type: 'stream',
    op: 'update',
    stream_id: channel.id,
    name: channel.name,
    property,
    value,
    ...extra,
  };
  tx.afterCommit(() => bus.publish({ event, userIds }));
}

/** default_streams: the organization's default channels (IDs), to every active user but guests (Zulip's notify_default_streams). */
export async function queueDefaultStreams(tx: Tx, bus: EventBus, realmId: number): Promise<void> {
  const [ids, users] = await Promise.all([listDefaultChannelIds(tx.trx, realmId), listActiveUserRoles(tx.trx, realmId)]);
  const event: EventBody<Schema<'DefaultStreamsEvent'>> = { type: 'default_streams', default_streams: ids };
  const userIds = users.filter((u) => !isGuestRole(u.role)).map((u) => u.id);
  tx.afterCommit(() => bus.publish({ event, userIds }));
}

/**
 * Archiving, as Zulip announces it since feature level 378: queues with the
 * archived_channels capability get a stream update of is_archived (they
 * keep the channel, now archived); the others a stream delete. Both go to
 * the audience the channel had before it was archived.
 */
export function queueChannelArchived(tx: Tx, bus: EventBus, channel: ChannelRow, audience: number[]): void {
  const update: EventBody<Schema<'StreamUpdateEvent'>> = {
    type: 'stream',
    op: 'update',
    stream_id: channel.id,
    name: channel.name,
    property: 'is_archived',
    value: true,
  };
  const deletion: EventBody<Schema<'StreamDeleteEvent'>> = {
    type: 'stream',
    op: 'delete',
    stream_ids: [channel.id],
    streams: [{ stream_id: channel.id }],
  };
  tx.afterCommit(() => {
    bus.publish({ event: update, userIds: audience, archivedChannels: true });
    bus.publish({ event: deletion, userIds: audience, archivedChannels: false });
  });
}
