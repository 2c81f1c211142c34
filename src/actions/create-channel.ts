import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import type { ChannelGroupSetting, GroupSettingValue } from '../domain/group-settings';
import { isAdminRole } from '../domain/roles';
import { ApiError } from '../errors';
import { inGroup, Viewer } from '../access/viewer';
import { getRealmById } from '../queries/realms';
import { checkCanCreateChannel, createChannelInTx, NewChannel } from './channels';
import { queueChannelCreated, queueSubscribed } from './channel-events';
import { announceNewChannelInTx, notifySubscribedInTx } from './notifications';
import { resolvePrincipals } from './subscriptions';

export interface CreateChannelParams {
  name: string;
  subscribers: number[];
  description?: string;
  announce?: boolean;
  invite_only?: boolean;
  is_web_public?: boolean;
  is_default_stream?: boolean;
  folder_id?: number;
  topics_policy?: string;
  history_public_to_subscribers?: boolean;
  message_retention_days?: string | number;
  send_new_subscription_messages?: boolean;
  [setting: string]: unknown;
}

/** POST /channels/create (feature level 417): a channel with every setting, and its first subscribers. */
export async function doCreateChannel(ctx: AppContext, viewer: Viewer, p: CreateChannelParams): Promise<number> {
  const realm = (await getRealmById(ctx.db, viewer.user.realm_id))!;
  const groupSettings: Partial<Record<ChannelGroupSetting, GroupSettingValue>> = {};
  for (const [k, v] of Object.entries(p)) {
    if (k.startsWith('can_') && k.endsWith('_group') && v !== undefined) groupSettings[k as ChannelGroupSetting] = v as GroupSettingValue;
  }
  const users = await resolvePrincipals(ctx, viewer, p.subscribers);
  const input: NewChannel = {
    name: p.name,
    description: p.description,
    inviteOnly: p.invite_only,
    isWebPublic: p.is_web_public,
    isDefault: p.is_default_stream,
    historyPublicToSubscribers: p.history_public_to_subscribers,
    messageRetentionDays: p.message_retention_days,
    topicsPolicy: p.topics_policy,
    folderId: p.folder_id,
    groupSettings,
    subscriberIds: users.map((u) => u.id),
  };
  checkCanCreateChannel(viewer, realm, input, ctx.config.webPublicStreamsEnabled);
  if (users.some((u) => u.id !== viewer.user.id) && !isAdminRole(viewer.user.role) && !inGroup(viewer, realm.can_add_subscribers_group as number)) {
    throw new ApiError('Insufficient permission');
  }
  return inTransaction(ctx.db, async (tx) => {
    const id = await createChannelInTx(tx, viewer.user, input);
    await queueChannelCreated(tx, ctx.bus, realm.id, id);
    await queueSubscribed(tx, ctx.bus, realm.id, id, input.subscriberIds);
    if (p.announce) await announceNewChannelInTx(tx, ctx.bus, realm, viewer.user, input.name.trim());
    if (p.send_new_subscription_messages ?? true) {
      const subscribed: Record<string, string[]> = {};
      for (const u of users) subscribed[String(u.id)] = [input.name.trim()];
      await notifySubscribedInTx(tx, ctx.bus, viewer.user, subscribed);
    }
    return id;
  });
}
