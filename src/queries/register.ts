import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { getUnreadHorizon, READ, sideRowsAtOrBelow } from './unread';
import type { ChannelRow, SubscriptionRow } from './channels';
import { CUSTOM_PROFILE_FIELD_COLUMNS, type ProfileValueRow } from './profile-fields';
import { mapBools } from './rows';
import type { FieldTypeCode } from '../domain/profile-fields';
import { RecipientType } from '../domain/recipients';

/**
 * The reads behind POST /register's initial state: one statement per
 * collection, whatever the size of the organization (never one per row).
 */
type Q = Knex | Knex.Transaction;

/** The user's personal settings for a channel: the subscription row plus its notification overrides (null inherits). */
export interface SubscriptionSettings extends SubscriptionRow {
  desktop_notifications: boolean | null;
  audible_notifications: boolean | null;
  push_notifications: boolean | null;
  email_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
}

/** Direct memberships of active users in the organization's groups. */
export async function listGroupMemberships(q: Q, realmId: number): Promise<Array<{ group_id: number; user_id: number }>> {
  return q('group_members as gm')
    .join('user_groups as g', 'g.id', 'gm.group_id')
    .join('users as u', 'u.id', 'gm.user_id')
    .where({ 'g.realm_id': realmId, 'u.is_active': true })
    .orderBy(['gm.group_id', 'gm.user_id'])
    .select('gm.group_id', 'gm.user_id');
}

export async function listSubgroupLinks(q: Q, realmId: number): Promise<Array<{ supergroup_id: number; subgroup_id: number }>> {
  return q('group_subgroups as gs')
    .join('user_groups as g', 'g.id', 'gs.supergroup_id')
    .where('g.realm_id', realmId)
    .orderBy(['gs.supergroup_id', 'gs.subgroup_id'])
    .select('gs.supergroup_id', 'gs.subgroup_id');
}

export async function listRealmChannels(q: Q, realmId: number): Promise<ChannelRow[]> {
  const rows = await q('channels').where({ realm_id: realmId }).orderBy('id');
  return rows.map((r) => mapBools<ChannelRow>(r));
}

/** The user's channel subscriptions, active and left ones, with their personal settings. */
export async function listChannelSubscriptions(q: Q, userId: number): Promise<SubscriptionSettings[]> {
  const rows = await q('subscriptions as s')
    .join('recipients as r', 'r.id', 's.recipient_id')
    .where({ 's.user_id': userId, 'r.type': RecipientType.CHANNEL })
    .select('s.*');
  return rows.map((r: TableRow<'subscriptions'>) => mapBools<SubscriptionSettings>(r));
}

const activeChannelSubscriptions = (q: Q, realmId: number) =>
  q('subscriptions as s')
    .join('channels as c', 'c.recipient_id', 's.recipient_id')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 'c.realm_id': realmId, 's.active': true, 'u.is_active': true });

/** Active subscribers per channel recipient. */
export async function countChannelSubscribers(q: Q, realmId: number): Promise<Map<number, number>> {
  const rows: Array<{ recipient_id: number; n: number | string }> = await activeChannelSubscriptions(q, realmId)
    .groupBy('s.recipient_id')
    .select('s.recipient_id')
    .count({ n: '*' });
  return new Map(rows.map((r) => [r.recipient_id, Number(r.n)]));
}

/** Active subscriber ids per channel recipient, ascending. */
export async function listChannelSubscribers(q: Q, realmId: number): Promise<Map<number, number[]>> {
  const rows: Array<{ recipient_id: number; user_id: number }> = await activeChannelSubscriptions(q, realmId)
    .orderBy(['s.recipient_id', 's.user_id'])
    .select('s.recipient_id', 's.user_id');
  const out = new Map<number, number[]>();
  for (const r of rows) {
    const list = out.get(r.recipient_id);
    if (list) list.push(r.user_id);
    else out.set(r.recipient_id, [r.user_id]);
  }
  return out;
}

export interface UnreadRow {
  message_id: number;
  flags: number;
  sender_id: number;
  recipient_id: number;
  recipient_type: number;
  recipient_type_id: number;
  topic: string;
}

/**
 * The user's newest `limit` unread messages, newest first: their rows above
 * their unread horizon, then their unread side rows at or below it
 * (src/queries/unread.ts). The read bit decides in both.
 */
export async function listUnreadRows(q: Q, userId: number, limit: number): Promise<UnreadRow[]> {
  const horizon = await getUnreadHorizon(q, userId);
  const above = await unreadRowsQuery(q, q('user_messages as um').where('um.user_id', userId).where('um.message_id', '>', horizon), limit);
  if (above.length >= limit) return above;
  const below = await unreadRowsQuery(q, sideRowsAtOrBelow(q, userId, horizon), limit - above.length, 'uu.message_id');
  return [...above, ...below];
}

/**
 * The unread rows among those `from` reads (aliased um), newest first, at
 * most `limit`; ordered by `idCol`, the id column of the table it walks (so
 * the database reads that table's key backwards rather than sorting).
 */
async function unreadRowsQuery(q: Q, from: Knex.QueryBuilder, limit: number, idCol = 'um.message_id'): Promise<UnreadRow[]> {
  const rows = await from
    .join('messages as m', 'm.id', 'um.message_id')
    .join('recipients as r', 'r.id', 'm.recipient_id')
    .whereRaw('(um.flags & ?) = 0', [READ])
    .orderBy(idCol, 'desc')
    .limit(limit)
    .select(
      'um.message_id',
      'um.flags',
      'm.sender_id',
      'm.recipient_id',
      'r.type as recipient_type',
      'r.type_id as recipient_type_id',
      'm.topic',
    );
  return rows.map((r: UnreadRow) => ({ ...r, message_id: Number(r.message_id), flags: Number(r.flags) }));
}

/** The user's user_messages rows of these messages, in the shape of listUnreadRows (read or not), ascending. */
export async function listUserMessageRowsByIds(q: Q, userId: number, messageIds: number[]): Promise<UnreadRow[]> {
  if (messageIds.length === 0) return [];
  const rows: UnreadRow[] = [];
  for (let i = 0; i < messageIds.length; i += 1000) {
    rows.push(
      ...(await q('user_messages as um')
        .join('messages as m', 'm.id', 'um.message_id')
        .join('recipients as r', 'r.id', 'm.recipient_id')
        .where('um.user_id', userId)
        .whereIn('um.message_id', messageIds.slice(i, i + 1000))
        .orderBy('um.message_id')
        .select(
          'um.message_id',
          'um.flags',
          'm.sender_id',
          'm.recipient_id',
          'r.type as recipient_type',
          'r.type_id as recipient_type_id',
          'm.topic',
        )),
    );
  }
  return rows.map((r) => ({ ...r, flags: Number(r.flags) }));
}

/** Of these channel recipients, the ones the user has muted. */
export async function listMutedRecipientIds(q: Q, userId: number, recipientIds: number[]): Promise<Set<number>> {
  if (recipientIds.length === 0) return new Set();
  const ids: number[] = await q('subscriptions')
    .where({ user_id: userId, is_muted: true })
    .whereIn('recipient_id', recipientIds)
    .pluck('recipient_id');
  return new Set(ids.map(Number));
}

/** Every custom profile field value of the organization's users. */
export async function listRealmProfileValues(q: Q, realmId: number): Promise<ProfileValueRow[]> {
  return q('custom_profile_values as v')
    .join('users as u', 'u.id', 'v.user_id')
    .where('u.realm_id', realmId)
    .select('v.user_id', 'v.field_id', 'v.value', 'v.rendered_value');
}

export async function listSavedSnippets(
  q: Q,
  userId: number,
): Promise<Array<{ id: number; title: string; content: string; date_created: number }>> {
  return q('saved_snippets').where({ user_id: userId }).orderBy('id').select('id', 'title', 'content', 'date_created');
}

export interface RealmEmojiListRow {
  id: number;
  name: string;
  file_name: string | null;
  author_id: number | null;
  deactivated: boolean;
  is_animated: boolean;
}

export async function listRealmEmoji(q: Q, realmId: number): Promise<RealmEmojiListRow[]> {
  const rows = await q('realm_emoji')
    .where({ realm_id: realmId })
    .orderBy('id')
    .select('id', 'name', 'file_name', 'author_id', 'deactivated', 'is_animated');
  return rows.map((r) => mapBools<RealmEmojiListRow>(r));
}

/**
 * Users who share a channel or a conversation with the user (who a user
 * with limited access may see, and who may see them). As in Zulip, a
 * channel counts only while both are active users (a deactivated account's
 * subscriptions have is_user_active false), a conversation always: the
 * people one has talked with stay known after they leave.
 */
export async function listUserIdsSharingRecipients(q: Q, userId: number): Promise<number[]> {
  return q('subscriptions as other')
    .join('subscriptions as mine', 'mine.recipient_id', 'other.recipient_id')
    .join('recipients as r', 'r.id', 'other.recipient_id')
    .where({ 'mine.user_id': userId, 'mine.active': true, 'other.active': true })
    .andWhere((b) => b.whereNot('r.type', RecipientType.CHANNEL).orWhere({ 'mine.is_user_active': true, 'other.is_user_active': true }))
    .distinct('other.user_id')
    .pluck('other.user_id');
}

export interface CustomProfileFieldRow {
  id: number;
  name: string;
  hint: string;
  /** One of Zulip's codes (src/domain/profile-fields.ts), the only ones stored. */
  field_type: FieldTypeCode;
  field_data: string;
  order: number;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
  use_for_user_matching: boolean;
}

/** The organization's custom profile fields in display order (Zulip orders them by `order`). */
export async function listCustomProfileFields(q: Q, realmId: number): Promise<CustomProfileFieldRow[]> {
  const rows = await q('custom_profile_fields')
    .where({ realm_id: realmId })
    .orderBy(['order', 'id'])
    .select(...CUSTOM_PROFILE_FIELD_COLUMNS);
  return rows.map((r) => mapBools<CustomProfileFieldRow>(r));
}

/** The user's starred messages, oldest first, at most `limit` (their side table, in key order). */
export async function listStarredMessageIds(q: Q, userId: number, limit: number): Promise<number[]> {
  const ids: Array<number | string> = await q('user_message_starred')
    .where('user_id', userId)
    .orderBy('message_id')
    .limit(limit)
    .pluck('message_id');
  return ids.map(Number);
}

/** One conversation of recent_private_conversations and one of its other participants (null: a note to self). */
export interface RecentDmRow {
  recipient_id: number;
  max_message_id: number;
  user_id: number | null;
}

/**
 * The conversations of the user's `limit` newest direct messages (their DM
 * side rows, newest first), each with its newest of those messages and its
 * participants other than the user, one row per participant: one
 * statement. Every DM, one-to-one ones too, has a DM-group recipient whose
 * subscribers are its participants (ADR 0006).
 */
export async function listRecentDmConversations(q: Q, userId: number, limit: number): Promise<RecentDmRow[]> {
  const newest = q('user_message_dm').where('user_id', userId).orderBy('message_id', 'desc').limit(limit).select('message_id');
  const conversations = q
    .from(newest.as('d'))
    .join('messages as m', 'm.id', 'd.message_id')
    .groupBy('m.recipient_id')
    .select('m.recipient_id')
    .max({ max_message_id: 'm.id' });
  const rows: Array<{ recipient_id: number; max_message_id: number | string; user_id: number | null }> = await q
    .from(conversations.as('c'))
    .leftJoin('subscriptions as s', (j) => j.on('s.recipient_id', 'c.recipient_id').andOnVal('s.user_id', '<>', userId))
    .orderBy([{ column: 'c.max_message_id', order: 'desc' }, 's.user_id'])
    .select('c.recipient_id', 'c.max_message_id', 's.user_id');
  return rows.map((r) => ({ recipient_id: Number(r.recipient_id), max_message_id: Number(r.max_message_id), user_id: r.user_id }));
}

export interface ChannelFolderRow {
  id: number;
  name: string;
  description: string;
  rendered_description: string;
  order: number;
  creator_id: number | null;
  date_created: number;
  is_archived: boolean;
}

/** Every channel folder of the organization, archived ones too, in display order. */
export async function listChannelFolders(q: Q, realmId: number): Promise<ChannelFolderRow[]> {
  const rows = await q('channel_folders').where({ realm_id: realmId }).orderBy(['order', 'id']);
  return rows.map((r) => mapBools<ChannelFolderRow>(r));
}
