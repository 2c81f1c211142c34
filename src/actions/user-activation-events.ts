import type { Schema } from '../contract';
import type { Tx } from '../db/transaction';
import type { EventBody, EventBus } from '../events/bus';
import { listChannelPeerIds, listDirectNamedGroupIds, listSubscribedChannels } from '../queries/audiences';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { listActiveUserIds } from '../queries/users';
import { toApiGroupMembersEvent, toApiRealmUserUpdateEvent } from '../serializers/users';
import { queuePeerChange } from './channel-events';

type Account = Pick<UserRow, 'id' | 'realm_id' | 'is_bot' | 'bot_owner_id'>;

/** The name Zulip gives someone one may no longer know about (UserProfile.INACCESSIBLE_USER_NAME). */
const INACCESSIBLE_USER_NAME = 'Unknown user';

/**
 * The events of an account deactivated in this transaction, in the order
 * of Zulip's send_events_for_user_deactivation:
 * - subscription peer_remove for each of its channels, to the channel's
 *   audience (subscriber lists hold active users only);
 * - realm_user update {is_active: false} (not remove, since feature level
 *   222) to those who may still know about it (can_access_all_users_group,
 *   and people it had conversations with);
 * - user_group remove_members, for the groups it is directly in, to those
 *   who may not: they get no realm_user update to tell them;
 * - realm_user remove to the people who knew it only through a channel —
 *   a deactivated account's subscriptions no longer make it known — with
 *   Zulip's placeholder name.
 * A bot's owner and the administrators learn of a bot's (de)activation from
 * the same realm_user update: since feature level 474 Zulip sends no
 * realm_bot update {is_active} for it, and neither does Parley.
 */
export async function queueDeactivationEvents(tx: Tx, bus: EventBus, user: Account): Promise<void> {
  const realmId = user.realm_id;
  await queuePeerChange(tx, bus, 'peer_remove', realmId, user.id, await listSubscribedChannels(tx.trx, user.id));
  const [withAccess, peers, active] = await Promise.all([
    listUsersWhoMayAccess(tx.trx, realmId, user.id, user.is_bot),
    listChannelPeerIds(tx.trx, user.id),
    listActiveUserIds(tx.trx, realmId),
  ]);
  const known = new Set(withAccess);
  const withoutAccess = active.filter((id) => !known.has(id));
  const losingAccess = peers.filter((id) => !known.has(id));
  const groups = withoutAccess.length > 0 ? await listDirectNamedGroupIds(tx.trx, user.id) : [];
  const removal: EventBody<Schema<'RealmUserRemoveEvent'>> = {
    type: 'realm_user',
    op: 'remove',
    person: { user_id: user.id, full_name: INACCESSIBLE_USER_NAME },
  };
  tx.afterCommit(() => {
    bus.publish({ event: toApiRealmUserUpdateEvent({ user_id: user.id, is_active: false }), userIds: withAccess });
    for (const g of groups) {
      bus.publish({ event: toApiGroupMembersEvent('remove_members', g, [user.id]), userIds: withoutAccess });
    }
    if (losingAccess.length > 0) bus.publish({ event: removal, userIds: losingAccess });
  });
}

/**
 * The events of an account reactivated in this transaction, as Zulip's
 * do_reactivate_user sends them: realm_user update {is_active: true} to
 * those who may know about it (now including its channels' subscribers
 * again; like Zulip, they get no realm_user add), peer_add for each of its
 * channels, and user_group add_members for its groups to everyone.
 */
export async function queueReactivationEvents(tx: Tx, bus: EventBus, user: Account): Promise<void> {
  const realmId = user.realm_id;
  const audience = await listUsersWhoMayAccess(tx.trx, realmId, user.id, user.is_bot);
  tx.afterCommit(() => {
    bus.publish({ event: toApiRealmUserUpdateEvent({ user_id: user.id, is_active: true }), userIds: audience });
  });
  await queuePeerChange(tx, bus, 'peer_add', realmId, user.id, await listSubscribedChannels(tx.trx, user.id));
  const groups = await listDirectNamedGroupIds(tx.trx, user.id);
  if (groups.length === 0) return;
  const everyone = await listActiveUserIds(tx.trx, realmId);
  tx.afterCommit(() => {
    for (const g of groups) bus.publish({ event: toApiGroupMembersEvent('add_members', g, [user.id]), userIds: everyone });
  });
}
