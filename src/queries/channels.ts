import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { invalidates } from '../db/invalidations';
import type { Schema } from '../contract';
import type { ChannelGroupSetting } from '../domain/group-settings';
import { RecipientType } from '../domain/recipients';
import { inChunks, insertOne } from './ids';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

/**
 * The channel's permission settings: each column holds a user group id.
 * NULL when the group was deleted (the foreign key sets it); the
 * serializer reads that as role:nobody.
 */
export type ChannelGroupColumns = { [K in ChannelGroupSetting]: number | null };

export interface ChannelRow extends ChannelGroupColumns {
  id: number;
  realm_id: number;
  name: string;
  name_key: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  is_default: boolean;
  message_retention_days: number | null;
  deactivated: boolean;
  first_message_id: number | null;
  creator_id: number | null;
  date_created: number;
  /**
   * Nullable in the table only for its foreign key: createChannelInTx sets
   * it in the channel's own transaction and recipients are never deleted.
   */
  recipient_id: number;
  /** Written only from validated requests (or the table's default, inherit). */
  topics_policy: Schema<'TopicsPolicy'>;
  folder_id: number | null;
  is_recently_active: boolean;
  subscriber_count: number;
}

export interface SubscriptionRow {
  id: number;
  user_id: number;
  recipient_id: number;
  active: boolean;
  is_user_active: boolean;
  is_muted: boolean;
  color: string;
  pin_to_top: boolean;
  /** The notification overrides: NULL inherits the user's own setting. */
  desktop_notifications: boolean | null;
  audible_notifications: boolean | null;
  push_notifications: boolean | null;
  email_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
}

const toChannel = (r: TableRow<'channels'> | undefined) => (r ? mapBools<ChannelRow>(r) : undefined);

export async function getChannelById(q: Q, realmId: number, id: number): Promise<ChannelRow | undefined> {
  return toChannel(await q('channels').where({ realm_id: realmId, id }).first());
}

/** By name, case-insensitively (names are unique that way). */
export async function getChannelByName(q: Q, realmId: number, name: string): Promise<ChannelRow | undefined> {
  return toChannel(await q('channels').where({ realm_id: realmId, name_key: name.trim().toLowerCase() }).first());
}

/** Several channels by name in one statement per thousand names: name key → channel. */
export async function getChannelsByNames(q: Q, realmId: number, names: readonly string[]): Promise<Map<string, ChannelRow>> {
  const keys = [...new Set(names.map((n) => n.trim().toLowerCase()))];
  const rows = await inChunks(keys, (slice) => q('channels').where({ realm_id: realmId }).whereIn('name_key', slice), 1000);
  return new Map(rows.map((r) => mapBools<ChannelRow>(r)).map((c) => [c.name_key, c]));
}

/** Channels of an organization, each with its active subscribers (active users) in the same statement. */
function channelsWithSubscribers(q: Q, realmId: number): Knex.QueryBuilder {
  return q('channels as c')
    .where('c.realm_id', realmId)
    .select(
      'c.*',
      q.raw(
        `(SELECT group_concat(s.user_id) FROM subscriptions s JOIN users u ON u.id = s.user_id
           WHERE s.recipient_id = c.recipient_id AND s.active = 1 AND u.is_active = 1) AS send_subscriber_ids`,
      ),
      // Of those, the long-idle ones a send may leave without a row (ADR 0058); NULL in most channels.
      q.raw(
        `(SELECT group_concat(s.user_id) FROM subscriptions s
           WHERE s.recipient_id = c.recipient_id AND s.active = 1 AND s.is_user_active = 1
             AND s.is_user_long_term_idle = 1 AND s.idle_keeps_rows = 0) AS idle_subscriber_ids`,
      ),
    );
}

/** A row of channelsWithSubscribers: the channel's columns and its subscribers' ids as group_concat's text (NULL: none). */
type ChannelWithSubscribersRow = TableRow<'channels'> & { send_subscriber_ids: string | null; idle_subscriber_ids: string | null };

/** A channel to send to: its row, its active subscribers, and those of them a send may leave without a row (null: none). */
export interface ChannelForSending {
  channel: ChannelRow;
  subscriberIds: number[];
  idleSubscriberIds: Set<number> | null;
}

function toChannelForSending(row: ChannelWithSubscribersRow): ChannelForSending {
  const { send_subscriber_ids: list, idle_subscriber_ids: idle, ...fields } = row;
  return {
    channel: mapBools<ChannelRow>(fields),
    subscriberIds: idsOf(list),
    idleSubscriberIds: idle === null || idle === undefined || idle === '' ? null : new Set(idsOf(idle)),
  };
}

const idsOf = (list: string | null | undefined): number[] => {
  const text = list === null || list === undefined ? '' : String(list);
  return text ? text.split(',').map(Number) : [];
};

/**
 * A channel to send to, by id or name, with its active subscribers (active
 * users) in the same statement: POST /messages' lookups in one round trip.
 * Read before the send's transaction, as Zulip computes a message's recipients.
 */
export async function getChannelForSending(q: Q, realmId: number, to: number | string): Promise<ChannelForSending | undefined> {
  const qb = channelsWithSubscribers(q, realmId).first();
  if (typeof to === 'number') qb.where('c.id', to);
  else qb.where('c.name_key', to.trim().toLowerCase());
  const row: ChannelWithSubscribersRow | undefined = await qb;
  return row ? toChannelForSending(row) : undefined;
}

/** Several channels as getChannelForSending reads them, by id: one statement per 1,000. */
export async function listChannelsForSending(q: Q, realmId: number, ids: readonly number[]): Promise<ChannelForSending[]> {
  const rows = await inChunks<ChannelWithSubscribersRow>(
    [...ids],
    (slice) => channelsWithSubscribers(q, realmId).whereIn('c.id', slice),
    1000,
  );
  return rows.map(toChannelForSending);
}

export async function getActiveSubscription(q: Q, userId: number, recipientId: number): Promise<SubscriptionRow | undefined> {
  const row = await q('subscriptions').where({ user_id: userId, recipient_id: recipientId, active: true }).first();
  return row ? mapBools<SubscriptionRow>(row) : undefined;
}

/** Recipient ids of the realm's public (not invite-only) channels. */
export async function getPublicChannelRecipientIds(q: Q, realmId: number): Promise<number[]> {
  // A channel's recipient is made in the transaction that creates it: never NULL once committed.
  return (await q('channels').where({ realm_id: realmId, invite_only: false }).pluck('recipient_id')) as number[];
}

/** Recipient ids of muted channels for a user. */
export async function getMutedChannelRecipientIds(q: Q, userId: number): Promise<number[]> {
  return q('subscriptions as s')
    .join('recipients as r', 'r.id', 's.recipient_id')
    .where({ 's.user_id': userId, 's.active': true, 's.is_muted': true, 'r.type': RecipientType.CHANNEL })
    .pluck('s.recipient_id');
}

export async function getActiveSubscriberIds(q: Q, recipientId: number): Promise<number[]> {
  return q('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.recipient_id': recipientId, 's.active': true, 'u.is_active': true })
    .pluck('s.user_id');
}

/** Whether the organization has this channel folder and it is not archived: its id, or undefined. */
export async function getActiveChannelFolderId(q: Q, realmId: number, folderId: number): Promise<number | undefined> {
  const row: { id: number } | undefined = await q('channel_folders')
    .where({ id: folderId, realm_id: realmId, is_archived: false })
    .first('id');
  return row?.id;
}

/** What createChannelInTx writes for a new channel; the other columns take the table's defaults. */
export type NewChannelRow = Pick<
  ChannelRow,
  | 'realm_id'
  | 'name'
  | 'name_key'
  | 'description'
  | 'rendered_description'
  | 'invite_only'
  | 'is_web_public'
  | 'history_public_to_subscribers'
  | 'is_default'
  | 'message_retention_days'
  | 'topics_policy'
  | 'folder_id'
  | 'creator_id'
  | 'date_created'
> & { [K in ChannelGroupSetting]: number };

/** Inserts a channel without its recipient (insertChannelRecipient adds it); returns its id. */
export async function insertChannel(q: Q, row: NewChannelRow): Promise<number> {
  const id = await insertOne(q, 'channels', row);
  invalidates(q, { kind: 'channel', channelIds: [id] });
  return id;
}

/** The channel's recipient, which messages and subscriptions address, linked from the channel: two statements. */
export async function insertChannelRecipient(q: Q, channelId: number): Promise<number> {
  const recipientId = await insertOne(q, 'recipients', { type: RecipientType.CHANNEL, type_id: channelId });
  await q('channels').where({ id: channelId }).update({ recipient_id: recipientId });
  invalidates(q, { kind: 'channel', channelIds: [channelId] });
  return recipientId;
}

/** The user's subscription to the recipient, active or left, or undefined when there never was one. */
export async function getSubscriptionStatus(
  q: Q,
  userId: number,
  recipientId: number,
): Promise<Pick<SubscriptionRow, 'id' | 'active'> | undefined> {
  const row = await q('subscriptions').where({ user_id: userId, recipient_id: recipientId }).first('id', 'active');
  return row ? mapBools<Pick<SubscriptionRow, 'id' | 'active'>>(row) : undefined;
}

/**
 * Marks a left subscription active again; its settings are the ones it had.
 * The channel's cached subscriber list is dropped by updateSubscriberCount,
 * which every change of a channel's subscribers runs.
 */
export async function reactivateSubscription(q: Q, id: number, userId: number): Promise<void> {
  await q('subscriptions').where({ id }).update({ active: true });
  invalidates(q, { kind: 'user', userIds: [userId] });
}

/** The colors of every subscription the user has (active or left), for picking the next palette color. */
export async function listSubscriptionColors(q: Q, userId: number): Promise<string[]> {
  return q('subscriptions').where({ user_id: userId }).pluck('color');
}

/** A new subscription; the settings not given take the table's defaults. */
export async function insertSubscription(q: Q, row: Pick<SubscriptionRow, 'user_id' | 'recipient_id' | 'color'>): Promise<void> {
  await q('subscriptions').insert(row);
  invalidates(q, { kind: 'user', userIds: [row.user_id] });
}

/** Which of these users have an active subscription to the recipient (whether or not their account is active). */
export async function listActiveSubscriberIdsAmong(q: Q, recipientId: number, userIds: readonly number[]): Promise<number[]> {
  const ids: Array<number | string> = await q('subscriptions')
    .where({ recipient_id: recipientId, active: true })
    .whereIn('user_id', userIds)
    .pluck('user_id');
  return ids.map(Number);
}

/** Marks the users' subscriptions to the recipient inactive, keeping their settings. */
export async function deactivateSubscriptions(q: Q, recipientId: number, userIds: readonly number[]): Promise<void> {
  await q('subscriptions').where({ recipient_id: recipientId }).whereIn('user_id', userIds).update({ active: false });
  invalidates(q, { kind: 'user', userIds });
}

/**
 * Recounts the channel's active subscribers who are active users into
 * channels.subscriber_count: three statements. Every change of a channel's
 * subscribers runs it, so it is also where the channel's cached row and
 * subscriber list are dropped.
 */
export async function updateSubscriberCount(q: Q, recipientId: number): Promise<void> {
  const row = await q('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.recipient_id': recipientId, 's.active': true, 'u.is_active': true })
    .count({ n: '*' })
    .first();
  await q('channels')
    .where({ recipient_id: recipientId })
    .update({ subscriber_count: Number(row?.n ?? 0) });
  const channelIds: Array<number | string> = await q('channels').where({ recipient_id: recipientId }).pluck('id');
  invalidates(q, { kind: 'channel', channelIds: channelIds.map(Number) });
}

/** The personal settings of a subscription its subscriber changes (PATCH /users/me/subscriptions/{id}). */
export type SubscriptionSettingColumns = Pick<
  SubscriptionRow,
  | 'color'
  | 'is_muted'
  | 'pin_to_top'
  | 'desktop_notifications'
  | 'audible_notifications'
  | 'push_notifications'
  | 'email_notifications'
  | 'wildcard_mentions_notify'
>;

/**
 * Changes personal settings of the user's subscription to the recipient.
 * No cache holds these columns (the caller cache keeps which channels a user
 * is subscribed to, not how), so nothing is invalidated.
 */
export async function updateSubscriptionSettings(
  q: Q,
  userId: number,
  recipientId: number,
  changes: Partial<SubscriptionSettingColumns>,
): Promise<void> {
  await q('subscriptions').where({ user_id: userId, recipient_id: recipientId }).update(changes);
}

/** The channel columns an administrator changes (PATCH /streams/{id}, archiving, default channels). */
export type ChannelSettingColumns = Partial<
  Pick<
    ChannelRow,
    | 'name'
    | 'name_key'
    | 'description'
    | 'rendered_description'
    | 'invite_only'
    | 'is_web_public'
    | 'history_public_to_subscribers'
    | 'is_default'
    | 'message_retention_days'
    | 'topics_policy'
    | 'folder_id'
    | 'deactivated'
    | ChannelGroupSetting
  >
>;

/** Changes a channel's settings; its cached row (the channel cache) is dropped on every node. */
export async function updateChannel(q: Q, channelId: number, changes: ChannelSettingColumns): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await q('channels').where({ id: channelId }).update(changes);
  invalidates(q, { kind: 'channel', channelIds: [channelId] });
}

/** The organization's default channels that are not archived, by id (the default_streams event and realm_default_streams). */
export async function listDefaultChannelIds(q: Q, realmId: number): Promise<number[]> {
  const ids: Array<number | string> = await q('channels')
    .where({ realm_id: realmId, is_default: true, deactivated: false })
    .orderBy('id')
    .pluck('id');
  return ids.map(Number);
}

/** Whether the user has an active subscription to the channel's recipient. */
export async function isSubscribed(q: Q, userId: number, recipientId: number): Promise<boolean> {
  return (await getActiveSubscription(q, userId, recipientId)) !== undefined;
}
