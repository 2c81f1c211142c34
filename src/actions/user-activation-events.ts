import type { Schema } from '../contract';
import type { Tx } from '../db/transaction';
import { Role } from '../domain/roles';
import type { EventBody, EventBus } from '../events/bus';
import { listActiveHumanIdsWithRole, listChannelPeerIds, listDirectNamedGroupIds, listSubscribedChannels } from '../queries/audiences';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { listActiveUserIds } from '../queries/users';
import { toApiGroupMembersEvent, toApiRealmBotActiveEvent, toApiRealmUserUpdateEvent } from '../serializers/users';
import { queuePeerChange } from './channel-events';

type Account = Pick<UserRow, 'id' | 'realm_id' | 'is_bot' | 'bot_owner_id'>;

/** The name Zulip gives someone one may no longer know about (UserProfile.INACCESSIBLE_USER_NAME). */
const INACCESSIBLE_USER_NAME = 'Unknown user';

/**
 * Who hears about a bot (Zulip's bot_owner_user_ids): its owner and the
 * organization's human administrators. Zulip narrows that to the owner for
 * bots whose default channels are private; Parley's bots have none.
 */
async function botAudience(tx: Tx, bot: Account): Promise<number[]> {
  const admins = await listActiveHumanIdsWithRole(tx.trx, bot.realm_id, Role.ADMINISTRATOR);
  return [...new Set(bot.bot_owner_id == null ? admins : [bot.bot_owner_id, ...admins])];
}

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
 *   Zulip's placeholder name;
 * - for a bot, realm_bot update {is_active: false} to its owner and the
 *   administrators.
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
  const owners = user.is_bot ? await botAudience(tx, user) : [];
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
    if (user.is_bot) bus.publish({ event: toApiRealmBotActiveEvent(user.id, false), userIds: owners });
  });
}

/**
 * The events of an account reactivated in this transaction, as Zulip's
 * do_reactivate_user sends them: realm_user update {is_active: true} to
 * those who may know about it (now including its channels' subscribers
 * again; like Zulip, they get no realm_user add), realm_bot update for a
 * bot, peer_add for each of its channels, and user_group add_members for
 * its groups to everyone.
 */
export async function queueReactivationEvents(tx: Tx, bus: EventBus, user: Account): Promise<void> {
  const realmId = user.realm_id;
  const [audience, owners] = await Promise.all([
    listUsersWhoMayAccess(tx.trx, realmId, user.id, user.is_bot),
    user.is_bot ? botAudience(tx, user) : Promise.resolve([]),
  ]);
  tx.afterCommit(() => {
    bus.publish({ event: toApiRealmUserUpdateEvent({ user_id: user.id, is_active: true }), userIds: audience });
    if (user.is_bot) bus.publish({ event: toApiRealmBotActiveEvent(user.id, true), userIds: owners });
  });
  await queuePeerChange(tx, bus, 'peer_add', realmId, user.id, await listSubscribedChannels(tx.trx, user.id));
  const groups = await listDirectNamedGroupIds(tx.trx, user.id);
  if (groups.length === 0) return;
  const everyone = await listActiveUserIds(tx.trx, realmId);
  tx.afterCommit(() => {
    for (const g of groups) bus.publish({ event: toApiGroupMembersEvent('add_members', g, [user.id]), userIds: everyone });
  });
}
