import type { Knex } from 'knex';
import { inChunks } from './ids';
import { mapBools, UserRow } from './rows';

type Q = Knex | Knex.Transaction;

export interface MessageRow {
  id: number;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  type: number;
  topic: string;
  content: string;
  rendered_content: string | null;
  date_sent: number;
  sending_client: string;
  last_edit_time: number | null;
  last_moved_time: number | null;
  is_me_message: boolean;
  has_attachment: boolean;
  has_image: boolean;
  has_link: boolean;
  /** Joined from recipients. */
  recipient_type: number;
  recipient_type_id: number;
  /** Joined from channels: the channel's id and name (null for direct messages). */
  channel_id: number | null;
  channel_name: string | null;
}

/**
 * Adds what a MessageRow carries beyond `messages` to a query over `messages as m`:
 * the recipient's type and the channel's id and name, so serializing needs no
 * separate lookup for them.
 */
export function selectMessageColumns(qb: Knex.QueryBuilder): Knex.QueryBuilder {
  return qb
    .join('recipients as r', 'r.id', 'm.recipient_id')
    .leftJoin('channels as c', 'c.recipient_id', 'm.recipient_id')
    .select('m.*', 'r.type as recipient_type', 'r.type_id as recipient_type_id', 'c.id as channel_id', 'c.name as channel_name');
}

export const toMessageRow = (r: Record<string, unknown>) => mapBools<MessageRow>(r);

export async function getMessageRows(q: Q, ids: number[]): Promise<MessageRow[]> {
  if (ids.length === 0) return [];
  const rows = await inChunks<Record<string, unknown>>(ids, (slice) =>
    selectMessageColumns(q('messages as m').whereIn('m.id', slice).orderBy('m.id')),
  );
  return rows.map(toMessageRow);
}

export async function getMessageRow(q: Q, id: number): Promise<MessageRow | undefined> {
  return (await getMessageRows(q, [id]))[0];
}

/** The viewer's flags for these messages; messages without a row are absent. */
export async function getFlagsForUser(q: Q, userId: number, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await inChunks(ids, (slice) =>
    q('user_messages').where({ user_id: userId }).whereIn('message_id', slice).select('message_id', 'flags'),
  );
  return new Map(rows.map((r: { message_id: number; flags: number }) => [r.message_id, Number(r.flags)]));
}

export interface ReactionRow {
  id: number;
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** Reactions of these messages, oldest first. */
export async function getReactions(q: Q, ids: number[]): Promise<ReactionRow[]> {
  if (ids.length === 0) return [];
  return q('reactions')
    .whereIn('message_id', ids)
    .orderBy('id')
    .select('id', 'message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type');
}

export interface EditRow {
  id: number;
  message_id: number;
  user_id: number | null;
  timestamp: number;
  prev_content: string | null;
  prev_rendered_content: string | null;
  prev_topic: string | null;
  topic: string | null;
  prev_stream: number | null;
  stream: number | null;
}

export async function getEdits(q: Q, ids: number[]): Promise<EditRow[]> {
  if (ids.length === 0) return [];
  return q('message_edits').whereIn('message_id', ids).orderBy('id', 'desc');
}

export interface ChannelRef {
  id: number;
  name: string;
  recipient_id: number;
}

/** Participants of DM conversations (their subscription rows), by recipient. */
export async function getDmParticipants(q: Q, recipientIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (recipientIds.length === 0) return out;
  const rows: Array<{ recipient_id: number; user_id: number }> = await q('subscriptions')
    .whereIn('recipient_id', recipientIds)
    .orderBy('user_id')
    .select('recipient_id', 'user_id');
  for (const r of rows) {
    const list = out.get(r.recipient_id) ?? [];
    list.push(r.user_id);
    out.set(r.recipient_id, list);
  }
  return out;
}

/** Participants of DM conversations with their user rows (sorted by id), by recipient. */
export async function getDmParticipantUsers(q: Q, recipientIds: number[]): Promise<Map<number, UserRow[]>> {
  const out = new Map<number, UserRow[]>();
  if (recipientIds.length === 0) return out;
  const rows: Array<Record<string, unknown>> = await q('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .whereIn('s.recipient_id', recipientIds)
    .orderBy('s.user_id')
    .select('u.*', 's.recipient_id as dm_recipient_id');
  for (const r of rows) {
    const recipientId = Number(r.dm_recipient_id);
    const list = out.get(recipientId) ?? [];
    list.push(mapBools<UserRow>(r));
    out.set(recipientId, list);
  }
  return out;
}

export async function getUsersByIds(q: Q, ids: number[]): Promise<Map<number, UserRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q('users').whereIn('id', [...new Set(ids)]);
  return new Map(
    rows.map((r: Record<string, unknown>) => {
      const u = mapBools<UserRow>(r);
      return [u.id, u];
    }),
  );
}
