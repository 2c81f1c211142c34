import type { Knex } from 'knex';
import { isWebPublicChannel } from '../../access/channels';
import { canSeeChannel, type Viewer } from '../../access/viewer';
import { isGuestRole } from '../../domain/roles';
import { listChannelFolders } from '../../queries/register';
import { toApiBasicChannel, toApiChannelFolder, type GroupLookup } from '../../serializers/subscriptions';
import type { StatePart } from './types';
import type { RealmChannels } from './subscriptions';

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * `stream`: every channel the user may know exists (Zulip's do_get_streams
 * with include_all), plus the web-public ones, which even a guest may read;
 * archived channels only for clients with the archived_channels capability.
 * By name, without subscriber lists, as GET /streams lists them.
 */
export function streamsState(
  viewer: Viewer,
  groups: GroupLookup,
  { channels, counts, traffic }: RealmChannels,
  archivedChannels: boolean,
): StatePart<'streams'> {
  const streams = channels
    .filter((c) => (archivedChannels || !c.deactivated) && (canSeeChannel(viewer, c) || isWebPublicChannel(c)))
    .sort(byName)
    .map((c) =>
      toApiBasicChannel(c, { groups, subscriberCount: counts.get(c.recipient_id) ?? 0, weeklyTraffic: traffic.get(c.id) ?? null }),
    );
  return { streams };
}

/**
 * `default_streams`: the organization's default channels (not archived).
 * Guests get none: Zulip pretends there are none rather than name channels
 * a guest may not see.
 */
export function defaultStreamsState(viewer: Viewer, { channels }: RealmChannels): StatePart<'realm_default_streams'> {
  if (isGuestRole(viewer.user.role)) return { realm_default_streams: [] };
  return { realm_default_streams: channels.filter((c) => c.is_default && !c.deactivated).map((c) => c.id) };
}

/** `channel_folders`: every folder of the organization, archived ones too (Zulip's include_archived), in display order. */
export async function channelFoldersState(db: Knex, realmId: number): Promise<StatePart<'channel_folders'>> {
  const rows = await listChannelFolders(db, realmId);
  return { channel_folders: rows.map(toApiChannelFolder) };
}
