import type { AppContext } from '../context';
import { inTransaction, Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';
import { isAdminRole } from '../domain/roles';
import { adminRequired, ApiError, invalidChannelId } from '../errors';
import { canAccessChannelContent, canSeeChannel, type Viewer } from '../access/viewer';
import { ChannelRow, getChannelById, updateChannel } from '../queries/channels';
import { queueDefaultStreams } from './channel-events';

/**
 * Makes the channel a default channel for new users, or stops it being
 * one, and tells the organization (default_streams) when that changed.
 * Runs in the caller's transaction; checks are the caller's.
 */
export async function setDefaultChannelInTx(tx: Tx, bus: EventBus, channel: ChannelRow, isDefault: boolean): Promise<void> {
  if (channel.is_default === isDefault) return;
  await updateChannel(tx.trx, channel.id, { is_default: isDefault });
  await queueDefaultStreams(tx, bus, channel.realm_id);
}

/**
 * POST /default_streams. Organization administrators only (Zulip's
 * can_manage_default_streams), then the channel as Zulip's
 * access_stream_by_id finds it (not archived, with content access: else
 * "Invalid channel ID"), and never a private one.
 */
export async function doAddDefaultChannel(ctx: AppContext, viewer: Viewer, channelId: number): Promise<void> {
  if (!isAdminRole(viewer.user.role)) throw adminRequired();
  const channel = await getChannelById(ctx.db, viewer.user.realm_id, channelId);
  if (!channel || channel.deactivated || !canAccessChannelContent(viewer, channel)) throw invalidChannelId();
  if (channel.invite_only) throw new ApiError('Private channels cannot be made default.');
  await inTransaction(ctx.db, (tx) => setDefaultChannelInTx(tx, ctx.bus, channel, true));
}

/**
 * DELETE /default_streams: as adding, but metadata access to the channel is
 * enough (Zulip's require_content_access=False). Removing a channel that
 * is not a default one succeeds and changes nothing.
 */
export async function doRemoveDefaultChannel(ctx: AppContext, viewer: Viewer, channelId: number): Promise<void> {
  if (!isAdminRole(viewer.user.role)) throw adminRequired();
  const channel = await getChannelById(ctx.db, viewer.user.realm_id, channelId);
  if (!channel || channel.deactivated || !canSeeChannel(viewer, channel)) throw invalidChannelId();
  await inTransaction(ctx.db, (tx) => setDefaultChannelInTx(tx, ctx.bus, channel, false));
}
