import type { AppContext } from '../context';
import type { Data } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { channelEmailAddress, newChannelEmailToken } from '../domain/email-gateway';
import { accessBotById } from '../access/bots';
import { accessChannelContent } from '../access/channels';
import type { Caller } from '../access/viewer';
import { getOrCreateChannelEmailAddress } from '../queries/channel-email-addresses';
import type { UserRow } from '../queries/rows';
import { getUserByEmailKey } from '../queries/users';
import { checkMayPostInChannel } from './messages';
import { createUserInTx } from './users';

/** The delivery address of each organization's Email Gateway bot (Zulip's EMAIL_GATEWAY_BOT). */
export const EMAIL_GATEWAY_BOT_EMAIL = 'emailgateway@parley.invalid';

/**
 * The organization's Email Gateway bot, made on first use: what mail to a
 * channel's address is posted as, unless the address names another sender.
 */
export async function emailGatewayBot(tx: Tx, realmId: number): Promise<UserRow> {
  const bot = await getUserByEmailKey(tx.trx, realmId, EMAIL_GATEWAY_BOT_EMAIL);
  if (bot) return bot;
  return createUserInTx(tx, null, { realmId, email: EMAIL_GATEWAY_BOT_EMAIL, fullName: 'Email Gateway', isBot: true, botType: 1 });
}

/**
 * GET /streams/{stream_id}/email_address: the caller's address of the
 * channel for the sender (Zulip's get_stream_email_address), made on the
 * first request. The caller must read and post in the channel (feature
 * level 448); the sender is the Email Gateway bot (by default, or named),
 * the caller, or a bot the caller administers. Without a gateway pattern
 * the address is "" (Zulip's encode_email_address), though the row is
 * still made, as Zulip makes it.
 */
export async function doGetChannelEmailAddress(
  ctx: AppContext,
  viewer: Caller,
  channelId: number,
  senderId: number | undefined,
): Promise<Data<'get-stream-email-address'>> {
  const channel = await accessChannelContent(ctx.db, viewer, channelId);
  checkMayPostInChannel(viewer, channel);
  const row = await inTransaction(ctx.db, async (tx) => {
    const gatewayBot = await emailGatewayBot(tx, viewer.realm.id);
    let sender: UserRow;
    if (senderId === undefined || senderId === gatewayBot.id) sender = gatewayBot;
    else if (senderId === viewer.user.id) sender = viewer.user;
    else sender = await accessBotById(tx.trx, viewer.user, senderId);
    return getOrCreateChannelEmailAddress(tx.trx, {
      realm_id: viewer.realm.id,
      channel_id: channel.id,
      creator_id: viewer.user.id,
      sender_id: sender.id,
      email_token: newChannelEmailToken(),
      created_at: Math.floor(ctx.clock.now() / 1000),
    });
  });
  const pattern = ctx.config.emailGatewayPattern;
  return { email: pattern === '' ? '' : channelEmailAddress(pattern, channel.name, row.email_token) };
}
