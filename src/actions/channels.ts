import type { Tx } from '../db/transaction';
import { CHANNEL_GROUP_DEFAULTS, channelNameKey, checkChannelName, SUBSCRIPTION_COLORS } from '../domain/channels';
import { renderMarkdown } from '../markdown/render';
import { addGroupMembers, getSystemGroupIds, insertGroup } from '../queries/groups';
import { insertOne, nowSeconds } from '../queries/ids';
import type { UserRow } from '../queries/rows';
import { ApiError } from '../errors';

export interface NewChannel {
  name: string;
  description?: string;
  inviteOnly?: boolean;
  historyPublicToSubscribers?: boolean;
  isDefault?: boolean;
  subscriberIds: number[];
}

/**
 * Creates a channel with Zulip's default permissions, its recipient, and the
 * initial subscriptions. Runs in the caller's transaction.
 */
export async function createChannelInTx(tx: Tx, creator: UserRow, input: NewChannel): Promise<number> {
  const { trx } = tx;
  const name = checkChannelName(input.name);
  const existing = await trx('channels').where({ realm_id: creator.realm_id, name_key: channelNameKey(name) }).first('id');
  if (existing) throw new ApiError(`Channel '${name}' already exists`, 'CHANNEL_ALREADY_EXISTS', 409);
  const groups = await getSystemGroupIds(trx, creator.realm_id);
  const now = nowSeconds();
  const creatorGroup = await insertGroup(trx, { realm_id: creator.realm_id, name: null, date_created: now });
  await addGroupMembers(trx, creatorGroup, [creator.id]);
  const settings: Record<string, number> = {};
  for (const [setting, group] of Object.entries(CHANNEL_GROUP_DEFAULTS)) {
    settings[setting] = group === 'channel_creator' ? creatorGroup : groups.get(group)!;
  }
  const inviteOnly = input.inviteOnly ?? false;
  const description = input.description ?? '';
  const channelId = await insertOne(trx, 'channels', {
    realm_id: creator.realm_id,
    name,
    name_key: channelNameKey(name),
    description,
    rendered_description: renderMarkdown(description),
    invite_only: inviteOnly,
    // Public channels always have shared history.
    history_public_to_subscribers: inviteOnly ? (input.historyPublicToSubscribers ?? false) : true,
    is_default: input.isDefault ?? false,
    creator_id: creator.id,
    date_created: now,
    ...settings,
  });
  const recipientId = await insertOne(trx, 'recipients', { type: 2, type_id: channelId });
  await trx('channels').where({ id: channelId }).update({ recipient_id: recipientId });
  await subscribeInTx(tx, recipientId, input.subscriberIds);
  await trx('channels').where({ id: channelId }).update({ subscriber_count: input.subscriberIds.length });
  return channelId;
}

/** Adds (or reactivates) subscriptions; new ones get the next palette color the user does not use yet. */
export async function subscribeInTx(tx: Tx, recipientId: number, userIds: number[]): Promise<void> {
  for (const userId of userIds) {
    const existing = await tx.trx('subscriptions').where({ user_id: userId, recipient_id: recipientId }).first('id');
    if (existing) {
      await tx.trx('subscriptions').where({ id: existing.id }).update({ active: true });
      continue;
    }
    const used = new Set<string>(await tx.trx('subscriptions').where({ user_id: userId }).pluck('color'));
    const color = SUBSCRIPTION_COLORS.find((c) => !used.has(c)) ?? SUBSCRIPTION_COLORS[used.size % SUBSCRIPTION_COLORS.length]!;
    await tx.trx('subscriptions').insert({ user_id: userId, recipient_id: recipientId, color });
  }
}
