import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { ApiError } from '../errors';
import { accessChannelForAdministration } from '../access/channels';
import type { Viewer } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import { getChannelById, updateChannel } from '../queries/channels';
import { channelAudience, queueChannelArchived, queueDefaultStreams } from './channel-events';

/**
 * DELETE /streams/{stream_id}: archives the channel as Zulip's
 * do_deactivate_stream does since channels became archivable in place
 * (feature levels 315 and 378): the row is marked deactivated and keeps its
 * name, privacy, messages and subscriptions; it stops being a default
 * channel; everyone who could know it exists is told (an is_archived update
 * or, for clients without the archived_channels capability, a delete); one
 * CHANNEL_DEACTIVATED audit row. Zulip's Notification Bot notice in the
 * channel is sent only where the organization's send_channel_events_messages
 * is on, which Parley's organizations have off.
 */
export async function doArchiveChannel(ctx: AppContext, viewer: Viewer, channelId: number): Promise<void> {
  const found = await accessChannelForAdministration(ctx.db, viewer, channelId);
  if (found.deactivated) throw new ApiError('Channel is already deactivated');
  await inTransaction(ctx.db, async (tx) => {
    // Read again in the transaction: a concurrent archive must not run twice.
    const channel = (await getChannelById(tx.trx, found.realm_id, found.id))!;
    if (channel.deactivated) throw new ApiError('Channel is already deactivated');
    // Who hears of it is decided before: the audience of a live channel.
    const audience = await channelAudience(tx, channel);
    await updateChannel(tx.trx, channel.id, { deactivated: true, is_default: false });
    if (channel.is_default) await queueDefaultStreams(tx, ctx.bus, channel.realm_id);
    queueChannelArchived(tx, ctx.bus, channel, audience);
    await insertAuditLog(tx.trx, {
      realmId: channel.realm_id,
      actorId: viewer.user.id,
      channelId: channel.id,
      eventType: AuditEventType.CHANNEL_DEACTIVATED,
    });
  });
}
