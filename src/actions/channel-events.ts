import type { Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';
import { loadRealmGroups } from '../events/register/groups';
import { isAdminRole, isGuestRole } from '../domain/roles';
import { ChannelRow, getChannelById } from '../queries/channels';
import { countChannelSubscribers, listChannelSubscriptions } from '../queries/register';
import { toApiBasicChannel, toApiSubscription } from '../serializers/subscriptions';

/**
 * Who hears about a channel's metadata and membership: for a public channel
 * every active user but guests who are not subscribed; for a private one its
 * subscribers and the organization's administrators.
 */
async function channelAudience(tx: Tx, c: ChannelRow): Promise<number[]> {
  const users: Array<{ id: number; role: number }> = await tx.trx('users').where({ realm_id: c.realm_id, is_active: true }).select('id', 'role');
  const subscribers = new Set<number>(await tx.trx('subscriptions').where({ recipient_id: c.recipient_id, active: true }).pluck('user_id'));
  return users
    .filter((u) => subscribers.has(u.id) || (c.invite_only ? isAdminRole(u.role) : !isGuestRole(u.role)))
    .map((u) => u.id);
}

async function channelViews(tx: Tx, channelId: number, realmId: number) {
  const channel = (await getChannelById(tx.trx, realmId, channelId))!;
  const [groups, counts] = await Promise.all([loadRealmGroups(tx.trx, realmId), countChannelSubscribers(tx.trx, realmId)]);
  const view = { groups: groups.lookup, subscriberCount: counts.get(channel.recipient_id) ?? 0 };
  return { channel, view };
}

/** stream create, for a channel made in this transaction; published after commit. */
export async function queueChannelCreated(tx: Tx, bus: EventBus, realmId: number, channelId: number): Promise<void> {
  const { channel, view } = await channelViews(tx, channelId, realmId);
  const audience = await channelAudience(tx, channel);
  const stream = toApiBasicChannel(channel, view);
  tx.afterCommit(() => bus.publish({ event: { type: 'stream', op: 'create', streams: [stream] }, userIds: audience }));
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
    const subscription = toApiSubscription(channel, sub, view);
    tx.afterCommit(() => bus.publish({ event: { type: 'subscription', op: 'add', subscriptions: [subscription] }, userIds: [userId] }));
  }
  const others = (await channelAudience(tx, channel)).filter((id) => !added.includes(id));
  tx.afterCommit(() =>
    bus.publish({ event: { type: 'subscription', op: 'peer_add', stream_ids: [channel.id], user_ids: added }, userIds: others }),
  );
}

/** subscription remove to those who left, peer_remove to the rest of the audience. */
export async function queueUnsubscribed(tx: Tx, bus: EventBus, channel: ChannelRow, removed: number[]): Promise<void> {
  if (removed.length === 0) return;
  for (const userId of removed) {
    tx.afterCommit(() =>
      bus.publish({ event: { type: 'subscription', op: 'remove', subscriptions: [{ name: channel.name, stream_id: channel.id }] }, userIds: [userId] }),
    );
  }
  const others = (await channelAudience(tx, channel)).filter((id) => !removed.includes(id));
  tx.afterCommit(() =>
    bus.publish({ event: { type: 'subscription', op: 'peer_remove', stream_ids: [channel.id], user_ids: removed }, userIds: others }),
  );
}
