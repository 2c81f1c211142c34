import type { Knex } from 'knex';
import type { Caches } from '../cache';
import type { Params, Schema } from '../contract';
import { ApiError, invalidChannelId, noSuchUser } from '../errors';
import { isAdminRole, isGuestRole } from '../domain/roles';
import { getActiveSubscriberIds, getChannelById, getChannelByName, isSubscribed, type ChannelRow } from '../queries/channels';
import { getRecentlyActive, getWeeklyTraffic } from '../queries/channel-stats';
import { getViewerMemberships } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import { countChannelSubscribers, listRealmChannels } from '../queries/register';
import { listChannelTopics } from '../queries/topics';
import { getUserInRealm } from '../queries/users';
import { encodeTopicSummaries, toApiTopicSummary } from '../serializers/topic-summaries';
import type { MaybeEncoded } from '../serializers/encoded-json';
import { toApiBasicChannel } from '../serializers/subscriptions';
import { loadRealmGroups } from './realm-groups';
import type { RealmRow } from '../queries/rows';
import { findInaccessibleUsers } from './user-access';
import { canAccessChannelContent, canSeeChannel, inGroup, type Caller, type Viewer } from './viewer';

/** A channel the viewer may know exists; a missing one and a hidden one give the same error. */
export async function accessChannelMetadata(db: Knex, viewer: Viewer, channelId: number): Promise<ChannelRow> {
  const channel = await getChannelById(db, viewer.user.realm_id, channelId);
  if (!channel || !canSeeChannel(viewer, channel)) throw invalidChannelId();
  return channel;
}

/** A channel whose messages the viewer may read (src/access/viewer.ts canAccessChannelContent). */
export async function accessChannelContent(db: Knex, viewer: Viewer, channelId: number): Promise<ChannelRow> {
  return checkChannelContent(viewer, await getChannelById(db, viewer.user.realm_id, channelId));
}

/**
 * accessChannelContent, the row read from the channel cache as a send reads
 * it: for reads made each time a channel is opened, where the row's read was
 * the request's one statement. The row may be as stale as a send accepts
 * (until its invalidation arrives).
 */
export async function accessCachedChannelContent(
  channels: Pick<Caches['channels'], 'forSending'>,
  viewer: Viewer,
  channelId: number,
): Promise<ChannelRow> {
  return checkChannelContent(viewer, (await channels.forSending(viewer.user.realm_id, channelId))?.channel);
}

function checkChannelContent(viewer: Viewer, channel: ChannelRow | undefined): ChannelRow {
  if (!channel || !canAccessChannelContent(viewer, channel)) throw invalidChannelId();
  return channel;
}

/** GET /get_stream_id: the channel by name (case-insensitive), with content access. */
export async function accessChannelIdByName(db: Knex, viewer: Viewer, name: string): Promise<number> {
  const channel = await getChannelByName(db, viewer.user.realm_id, name);
  // Zulip quotes the name as given, whether the channel is missing or hidden.
  if (!channel || !canAccessChannelContent(viewer, channel)) throw new ApiError(`Invalid channel name '${name}'`);
  return channel.id;
}

type ChannelListParams = Params<'get-streams'>;

/** A channel spectators may read (web-public, hence public with shared history), which every user may list too. */
export const isWebPublicChannel = (c: Pick<ChannelRow, 'is_web_public' | 'invite_only' | 'history_public_to_subscribers'>) =>
  c.is_web_public && !c.invite_only && c.history_public_to_subscribers;

/**
 * Which of the organization's channels GET /streams lists: the union of the
 * sources asked for, as Zulip's get_streams_for_user. include_all (and its
 * legacy name) replaces the other sources with every channel the viewer may
 * know exists; include_can_access_content adds every channel whose messages
 * they may read. Guests never get public channels through include_public.
 */
function selectChannels(channels: ChannelRow[], viewer: Viewer, p: ChannelListParams, ownerRecipients: ReadonlySet<number>): ChannelRow[] {
  const excludeArchived = p.exclude_archived ?? true;
  const live = excludeArchived ? channels.filter((c) => !c.deactivated) : channels;
  if (p.include_all || p.include_all_active) return live.filter((c) => canSeeChannel(viewer, c));
  const includePublic = (p.include_public ?? true) && !isGuestRole(viewer.user.role);
  const includeSubscribed = p.include_subscribed ?? true;
  return live.filter(
    (c) =>
      (p.include_can_access_content && canAccessChannelContent(viewer, c)) ||
      (includeSubscribed && viewer.subscribedRecipients.has(c.recipient_id)) ||
      (includePublic && !c.invite_only) ||
      (p.include_web_public && isWebPublicChannel(c) && !c.deactivated) ||
      ownerRecipients.has(c.recipient_id),
  );
}

/**
 * What every channel object needs beside its row, for these channels: its
 * weekly traffic, and is_recently_active from its messages (the stored column
 * is only the value a new channel starts with). Two statements, whatever the
 * number of channels.
 */
export async function withActivity(
  db: Knex,
  rows: ChannelRow[],
  now: number,
): Promise<{ channels: ChannelRow[]; traffic: Map<number, number | null> }> {
  const [traffic, recent] = await Promise.all([getWeeklyTraffic(db, rows, now), getRecentlyActive(db, rows, now)]);
  return { channels: rows.map((c) => ({ ...c, is_recently_active: recent.get(c.id) ?? false })), traffic };
}

/** GET /streams: the selected channels without personal settings, sorted by name; is_default on request. */
export async function listChannels(db: Knex, viewer: Viewer, p: ChannelListParams): Promise<Array<Schema<'BasicChannel'>>> {
  const realmId = viewer.user.realm_id;
  const now = nowSeconds();
  const ownerId = p.include_owner_subscribed && viewer.user.is_bot ? viewer.user.bot_owner_id : null;
  const [groups, channels, counts, owner] = await Promise.all([
    loadRealmGroups(db, realmId),
    listRealmChannels(db, realmId),
    countChannelSubscribers(db, realmId),
    ownerId === null ? null : getViewerMemberships(db, ownerId, realmId),
  ]);
  const selected = selectChannels(channels, viewer, p, owner?.subscribedRecipients ?? new Set()).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const { channels: listed, traffic } = await withActivity(db, selected, now);
  return listed.map((c) => ({
    ...toApiBasicChannel(c, {
      groups: groups.lookup,
      subscriberCount: counts.get(c.recipient_id) ?? 0,
      weeklyTraffic: traffic.get(c.id) ?? null,
    }),
    ...(p.include_default && { is_default: c.is_default }),
  }));
}

/** GET /streams/{stream_id}: one channel the viewer may know exists, archived or not. */
export async function getChannel(db: Knex, viewer: Viewer, channelId: number): Promise<Schema<'BasicChannel'>> {
  const channel = await accessChannelMetadata(db, viewer, channelId);
  const now = nowSeconds();
  const [groups, counts, activity] = await Promise.all([
    loadRealmGroups(db, viewer.user.realm_id),
    countChannelSubscribers(db, viewer.user.realm_id),
    withActivity(db, [channel], now),
  ]);
  return toApiBasicChannel(activity.channels[0]!, {
    groups: groups.lookup,
    subscriberCount: counts.get(channel.recipient_id) ?? 0,
    weeklyTraffic: activity.traffic.get(channel.id) ?? null,
  });
}

/**
 * GET /users/me/{stream_id}/topics: with shared history every message of the
 * channel counts (the channel's topic list, cached per node); with protected
 * history only those the viewer received.
 */
export async function listTopics(
  db: Knex,
  caches: Pick<Caches, 'channels' | 'topicLists'>,
  viewer: Viewer,
  channelId: number,
  allowEmptyTopicName: boolean,
): Promise<MaybeEncoded<Array<Schema<'TopicSummary'>>>> {
  // Apps ask for the list each time a channel is opened; a read of the channel's row was
  // the request's one statement (a round trip, and about a fifth of its CPU in the database).
  const channel = await accessCachedChannelContent(caches.channels, viewer, channelId);
  const publicHistory = !channel.invite_only || channel.history_public_to_subscribers;
  // A channel whose history every subscriber shares has one list, cached and kept encoded;
  // with protected history each user's list is their own, read each time.
  if (publicHistory) return encodeTopicSummaries(await caches.topicLists.get(channel.recipient_id), allowEmptyTopicName);
  const rows = await listChannelTopics(db, channel.recipient_id, viewer.user.id);
  return rows.map((r) => toApiTopicSummary(r, allowEmptyTopicName));
}

export type ChannelKind = 'public' | 'private' | 'web_public';

/**
 * Whether the viewer may create a channel of this kind, as Zulip decides it:
 * never a guest; the organization's can_create_{public,private,web_public}
 * _channel_group; web-public ones only while the server
 * (WEB_PUBLIC_STREAMS_ENABLED) and the organization allow spectators. What
 * channel creation enforces (src/actions/channels.ts) and POST /register's
 * can_create_*_streams report.
 */
export function canCreateChannelKind(viewer: Viewer, realm: RealmRow, kind: ChannelKind, webPublicEnabled: boolean): boolean {
  if (isGuestRole(viewer.user.role)) return false;
  if (kind === 'web_public')
    return webPublicEnabled && realm.enable_spectator_access && inGroup(viewer, realm.can_create_web_public_channel_group);
  return inGroup(viewer, kind === 'private' ? realm.can_create_private_channel_group : realm.can_create_public_channel_group);
}

/**
 * Whether the viewer administers the channel (Zulip's
 * can_administer_accessible_channel): organization administrators always;
 * members of its can_administer_channel_group, never guests (the setting
 * does not admit role:everyone, so a guest listed by hand does not count).
 */
export function canAdministerChannel(viewer: Viewer, c: ChannelRow): boolean {
  if (isAdminRole(viewer.user.role)) return true;
  return !isGuestRole(viewer.user.role) && inGroup(viewer, c.can_administer_channel_group);
}

/**
 * A channel the viewer may change or archive (Zulip's
 * access_stream_for_delete_or_update_requiring_metadata_access), archived
 * or not: a missing channel, and one the viewer may not read, is "Invalid
 * channel ID"; one they may read but not administer says so.
 */
export async function accessChannelForAdministration(db: Knex, viewer: Viewer, channelId: number): Promise<ChannelRow> {
  const channel = await getChannelById(db, viewer.user.realm_id, channelId);
  if (!channel) throw invalidChannelId();
  if (canAdministerChannel(viewer, channel)) return channel;
  // Only someone who may read the channel learns that it exists and that they do not administer it.
  // Zulip's CannotAdministerChannelError, with the code of its own (ErrorCode.CANNOT_ADMINISTER_CHANNEL).
  if (canAccessChannelContent(viewer, channel)) {
    throw new ApiError('You do not have permission to administer this channel.', 'CANNOT_ADMINISTER_CHANNEL');
  }
  throw invalidChannelId();
}

/**
 * GET /streams/{stream_id}/members: the channel's subscribers who are active
 * users, for anyone with metadata access (archived channels too, feature
 * level 480): private channels' lists are shown to the same people who may
 * know the channel exists.
 */
export async function listChannelMembers(db: Knex, viewer: Viewer, channelId: number): Promise<number[]> {
  const channel = await accessChannelMetadata(db, viewer, channelId);
  return (await getActiveSubscriberIds(db, channel.recipient_id)).map(Number).sort((a, b) => a - b);
}

/**
 * GET /users/{user_id}/subscriptions/{stream_id}: whether the user is
 * subscribed. The user first (Zulip's access_user_by_id: unknown users and
 * bots are "No such user", deactivated ones "User is deactivated", people
 * the viewer may not know "Insufficient permission"), then the channel
 * (not archived, with metadata access).
 */
export async function getSubscriptionStatus(db: Knex, viewer: Caller, userId: number, channelId: number): Promise<boolean> {
  const target = await getUserInRealm(db, viewer.user.realm_id, userId);
  if (!target || target.is_bot) throw noSuchUser();
  if (!target.is_active) throw new ApiError('User is deactivated');
  const inaccessible = await findInaccessibleUsers(db, viewer, [target], inGroup(viewer, viewer.realm.can_access_all_users_group));
  if (inaccessible.size) throw new ApiError('Insufficient permission');
  const channel = await getChannelById(db, viewer.user.realm_id, channelId);
  if (!channel || channel.deactivated || !canSeeChannel(viewer, channel)) throw invalidChannelId();
  return isSubscribed(db, target.id, channel.recipient_id);
}
