import type { Knex } from 'knex';
import { inChunks } from './ids';
import { mapBools } from './rows';
import { RecipientType } from '../domain/recipients';

type Q = Knex | Knex.Transaction;

export interface ChannelRow {
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
  recipient_id: number;
  topics_policy: string;
  folder_id: number | null;
  is_recently_active: boolean;
  subscriber_count: number;
  can_add_subscribers_group: number;
  can_administer_channel_group: number;
  can_create_topic_group: number;
  can_delete_any_message_group: number;
  can_delete_own_message_group: number;
  can_move_messages_out_of_channel_group: number;
  can_move_messages_within_channel_group: number;
  can_remove_subscribers_group: number;
  can_resolve_topics_group: number;
  can_send_message_group: number;
  can_subscribe_group: number;
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
}

const toChannel = (r: Record<string, unknown> | undefined) => (r ? mapBools<ChannelRow>(r) : undefined);

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
  return new Map(rows.map((r: Record<string, unknown>) => [r.name_key as string, toChannel(r)!]));
}

/**
 * A channel to send to, by id or name, with its active subscribers (active
 * users) in the same statement: POST /messages' lookups in one round trip.
 * Read before the send's transaction, as Zulip computes a message's recipients.
 */
export async function getChannelForSending(
  q: Q,
  realmId: number,
  to: number | string,
): Promise<{ channel: ChannelRow; subscriberIds: number[] } | undefined> {
  const qb = q('channels as c')
    .where('c.realm_id', realmId)
    .select(
      'c.*',
      q.raw(
        `(SELECT group_concat(s.user_id) FROM subscriptions s JOIN users u ON u.id = s.user_id
           WHERE s.recipient_id = c.recipient_id AND s.active = 1 AND u.is_active = 1) AS send_subscriber_ids`,
      ),
    )
    .first();
  if (typeof to === 'number') qb.where('c.id', to);
  else qb.where('c.name_key', to.trim().toLowerCase());
  const row: Record<string, unknown> | undefined = await qb;
  if (!row) return undefined;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (k !== 'send_subscriber_ids') fields[k] = v;
  const ids = row.send_subscriber_ids === null || row.send_subscriber_ids === undefined ? '' : String(row.send_subscriber_ids);
  return { channel: mapBools<ChannelRow>(fields), subscriberIds: ids ? ids.split(',').map(Number) : [] };
}

export async function getActiveSubscription(q: Q, userId: number, recipientId: number): Promise<SubscriptionRow | undefined> {
  const row = await q('subscriptions').where({ user_id: userId, recipient_id: recipientId, active: true }).first();
  return row ? mapBools<SubscriptionRow>(row) : undefined;
}

/** Recipient ids of the realm's public (not invite-only) channels. */
export async function getPublicChannelRecipientIds(q: Q, realmId: number): Promise<number[]> {
  return q('channels').where({ realm_id: realmId, invite_only: false }).pluck('recipient_id');
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
