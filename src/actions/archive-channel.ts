import type { Knex } from 'knex';
import type { AppContext } from '../context';
import type { Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import type { EventBody, EventBus } from '../events/bus';
import { AuditEventType } from '../domain/audit';
import { ApiError } from '../errors';
import { accessChannelForAdministration } from '../access/channels';
import { loadRealmGroups } from '../access/realm-groups';
import type { Viewer } from '../access/viewer';
import { listSubscriberIdsByRecipient } from '../queries/audiences';
import { insertAuditLog } from '../queries/audit';
import { ChannelRow, getChannelById, updateChannel } from '../queries/channels';
import { getRealmById, updateRealm } from '../queries/realms';
import { countChannelSubscribers } from '../queries/register';
import { listActiveUserIds } from '../queries/users';
import { toApiBasicChannel, toApiStreamCreateEvent } from '../serializers/subscriptions';
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
    await clearOrganizationChannelSettings(ctx, tx, channel);
    queueChannelArchived(tx, ctx.bus, channel, audience);
    await insertAuditLog(tx.trx, {
      realmId: channel.realm_id,
      actorId: viewer.user.id,
      channelId: channel.id,
      eventType: AuditEventType.CHANNEL_DEACTIVATED,
    });
  });
}

/** The organization settings that name a channel (the moderation requests and the two announcement channels). */
const ORGANIZATION_CHANNEL_SETTINGS = [
  'moderation_request_channel_id',
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
] as const;

/**
 * An archived channel stops being any of the organization's channels, as in
 * Zulip's do_deactivate_stream: each setting that named it becomes none, and
 * everyone gets one realm/update_dict with -1 (Zulip's "none") for each. Like
 * Zulip, no audit row: the archive's own row says what happened.
 */
async function clearOrganizationChannelSettings(ctx: AppContext, tx: Tx, channel: { id: number; realm_id: number }): Promise<void> {
  const realm = (await getRealmById(tx.trx, channel.realm_id))!;
  const cleared = ORGANIZATION_CHANNEL_SETTINGS.filter((setting) => realm[setting] === channel.id);
  if (cleared.length === 0) return;
  await updateRealm(tx.trx, realm.id, Object.fromEntries(cleared.map((setting) => [setting, null])));
  const audience = await listActiveUserIds(tx.trx, realm.id);
  const data = Object.fromEntries(cleared.map((setting) => [setting, -1]));
  tx.afterCommit(() => ctx.bus.publish({ event: { type: 'realm', op: 'update_dict', property: 'default', data }, userIds: audience }));
}

/**
 * The checks of Zulip's do_unarchive_stream, for PATCH /streams/{stream_id}
 * with is_archived=false, given the privacy the request leaves the channel
 * with: the channel must be archived, and a private one must still have a
 * subscription (a deactivated user's counts, as Zulip's
 * include_deactivated_users), or nobody could ever reach it again.
 */
export async function checkUnarchive(q: Knex | Knex.Transaction, channel: ChannelRow, willBePrivate: boolean): Promise<void> {
  if (!channel.deactivated) throw new ApiError('Channel is not currently deactivated');
  if (willBePrivate && !(await listSubscriberIdsByRecipient(q, [channel.recipient_id])).get(channel.recipient_id)?.size) {
    // Zulip's words, grammar included.
    throw new ApiError('Channel is private and have no subscribers');
  }
}

/**
 * Unarchives the channel in the caller's transaction, as Zulip's
 * do_unarchive_stream: the row is live again with its name, privacy and
 * subscriptions; it does not become a default channel or any of the
 * organization's channels again. Everyone who may know it exists hears of it
 * as archiving told them: `archived_channels` clients, which kept the
 * channel, an is_archived update; the others, which were told it was
 * deleted, a stream create. One CHANNEL_REACTIVATED audit row without an
 * acting user: Zulip's view passes none. Zulip's Notification Bot notice is
 * sent only where send_channel_events_messages is on, which Parley's
 * organizations have off.
 */
export async function unarchiveChannelInTx(tx: Tx, bus: EventBus, channel: ChannelRow): Promise<ChannelRow> {
  // Zulip also clears is_web_public on a private channel here (older archives could leave both);
  // PATCH refuses that state before ("Invalid parameters"), so this only guards the row.
  const changes = { deactivated: false, ...(channel.invite_only && channel.is_web_public ? { is_web_public: false } : {}) };
  await updateChannel(tx.trx, channel.id, changes);
  const live: ChannelRow = { ...channel, ...changes };
  const [audience, groups, counts] = await Promise.all([
    channelAudience(tx, live),
    loadRealmGroups(tx.trx, live.realm_id),
    countChannelSubscribers(tx.trx, live.realm_id),
  ]);
  const update: EventBody<Schema<'StreamUpdateEvent'>> = {
    type: 'stream',
    op: 'update',
    stream_id: live.id,
    name: live.name,
    property: 'is_archived',
    value: false,
  };
  const create = toApiStreamCreateEvent([
    toApiBasicChannel(live, { groups: groups.lookup, subscriberCount: counts.get(live.recipient_id) ?? 0 }),
  ]);
  tx.afterCommit(() => {
    bus.publish({ event: update, userIds: audience, archivedChannels: true });
    bus.publish({ event: create, userIds: audience, archivedChannels: false });
  });
  await insertAuditLog(tx.trx, {
    realmId: live.realm_id,
    actorId: null,
    channelId: live.id,
    eventType: AuditEventType.CHANNEL_REACTIVATED,
  });
  return live;
}
