import type { Knex } from 'knex';
import { isGuestRole } from '../domain/roles';
import { ApiError, invalidChannelId } from '../errors';
import { type ChannelRow, getChannelById, getChannelByName } from '../queries/channels';
import { canSeeChannel, type Viewer } from './viewer';

/**
 * Which channel a visibility policy names, and whether the caller may set
 * one there. Setting a policy (mute, unmute, follow) needs the channel's
 * messages, as Zulip's access_stream_by_id: a public channel for members, a
 * subscription otherwise; a missing, archived or inaccessible channel gets
 * the same error. Removing one needs only a channel of the organization
 * (Zulip's access_stream_to_remove_visibility_policy_*), so a topic muted
 * before the user lost access can still be cleared.
 */
export type ChannelRef = { id: number } | { name: string };

function accessible(viewer: Viewer, channel: ChannelRow | undefined): channel is ChannelRow {
  if (!channel || channel.deactivated || !canSeeChannel(viewer, channel)) return false;
  const subscribed = viewer.subscribedRecipients.has(channel.recipient_id);
  return subscribed || (!channel.invite_only && !isGuestRole(viewer.user.role));
}

const findChannel = (db: Knex, realmId: number, ref: ChannelRef) =>
  'id' in ref ? getChannelById(db, realmId, ref.id) : getChannelByName(db, realmId, ref.name);

/** A channel where the caller may set a policy; else "Invalid channel ID" or "Invalid channel name 'x'". */
export async function accessChannelForTopicPolicy(db: Knex, viewer: Viewer, ref: ChannelRef): Promise<ChannelRow> {
  const channel = await findChannel(db, viewer.user.realm_id, ref);
  if (accessible(viewer, channel)) return channel;
  throw 'id' in ref ? invalidChannelId() : new ApiError(`Invalid channel name '${ref.name}'`);
}

/** A channel of the caller's organization, for removing a policy; else `error`. */
export async function accessChannelToRemoveTopicPolicy(db: Knex, viewer: Viewer, ref: ChannelRef, error: string): Promise<ChannelRow> {
  const channel = await findChannel(db, viewer.user.realm_id, ref);
  if (!channel) throw new ApiError(error);
  return channel;
}
