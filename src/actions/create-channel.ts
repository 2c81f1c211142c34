import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { inTransaction } from '../db/transaction';
import { isAdminRole } from '../domain/roles';
import { ApiError } from '../errors';
import { inGroup, Caller } from '../access/viewer';
import { channelSettingsFromParams, checkCanCreateChannel, createChannelInTx, NewChannel } from './channels';
import { queueChannelCreated, queueDefaultStreams, queueSubscribed } from './channel-events';
import { announceNewChannelInTx, notifySubscribedInTx } from './notifications';
import { resolvePrincipals } from './subscriptions';

/** POST /channels/create (feature level 417): a channel with every setting, and its first subscribers. */
export async function doCreateChannel(ctx: AppContext, viewer: Caller, p: Params<'create-channel'>): Promise<Data<'create-channel'>> {
  const realm = viewer.realm;
  const users = await resolvePrincipals(ctx, viewer, p.subscribers);
  const input: NewChannel = {
    ...channelSettingsFromParams(p),
    name: p.name,
    description: p.description,
    subscriberIds: users.map((u) => u.id),
  };
  checkCanCreateChannel(viewer, realm, input, ctx.config.webPublicStreamsEnabled);
  if (users.some((u) => u.id !== viewer.user.id) && !isAdminRole(viewer.user.role) && !inGroup(viewer, realm.can_add_subscribers_group)) {
    throw new ApiError('Insufficient permission');
  }
  return inTransaction(ctx.db, async (tx) => {
    const id = await createChannelInTx(tx, viewer.user, input);
    await queueChannelCreated(tx, ctx.bus, realm.id, id);
    if (input.isDefault) await queueDefaultStreams(tx, ctx.bus, realm.id);
    await queueSubscribed(tx, ctx.bus, realm.id, id, input.subscriberIds);
    if (p.announce) await announceNewChannelInTx(tx, ctx.bus, realm, viewer.user, input.name.trim());
    if (p.send_new_subscription_messages) {
      const subscribed: Record<string, string[]> = {};
      for (const u of users) subscribed[String(u.id)] = [input.name.trim()];
      await notifySubscribedInTx(tx, ctx.bus, realm, viewer.user, subscribed);
    }
    return { id };
  });
}
