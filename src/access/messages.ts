import type { Knex } from 'knex';
import { invalidMessage } from '../errors';
import { getChannelById } from '../queries/channels';
import {
  getChannelsByRecipient, getDmParticipants, getEdits, getFlagsForUser, getMessageRows, getReactions, getUsersByIds, MessageRow,
} from '../queries/messages';
import { getRealmById } from '../queries/realms';
import type { MessageLookups } from '../serializers/messages';
import { canReadChannelHistory, Viewer } from './viewer';

export interface AccessibleMessage {
  row: MessageRow;
  /** The viewer's flags, or null when they read it as channel history without a row. */
  flags: number | null;
}

/**
 * A message the viewer may read: one they received (a user_messages row),
 * or one in a channel whose history they may read. Missing and forbidden
 * give the same 'Invalid message(s)'.
 */
export async function accessMessage(db: Knex, viewer: Viewer, id: number): Promise<AccessibleMessage> {
  const [found] = await accessMessages(db, viewer, [id]);
  if (!found) throw invalidMessage();
  return found;
}

/** The accessible subset of `ids`, in id order (three queries whatever the count). */
export async function accessMessages(db: Knex, viewer: Viewer, ids: number[]): Promise<AccessibleMessage[]> {
  const rows = (await getMessageRows(db, ids)).filter((r) => r.realm_id === viewer.user.realm_id);
  const flags = await getFlagsForUser(db, viewer.user.id, rows.map((r) => r.id));
  const out: AccessibleMessage[] = [];
  const channelCache = new Map<number, boolean>();
  for (const row of rows) {
    const f = flags.get(row.id);
    if (f !== undefined) {
      out.push({ row, flags: f });
      continue;
    }
    if (row.recipient_type !== 2) continue;
    let readable = channelCache.get(row.recipient_type_id);
    if (readable === undefined) {
      const channel = await getChannelById(db, viewer.user.realm_id, row.recipient_type_id);
      readable = channel !== undefined && canReadChannelHistory(viewer, channel);
      channelCache.set(row.recipient_type_id, readable);
    }
    if (readable) out.push({ row, flags: null });
  }
  return out;
}

/** Everything the serializer needs for these messages, in a fixed number of queries. */
export async function loadMessageLookups(db: Knex, realmId: number, rows: MessageRow[]): Promise<MessageLookups> {
  const ids = rows.map((r) => r.id);
  const channelRecipients = [...new Set(rows.filter((r) => r.recipient_type === 2).map((r) => r.recipient_id))];
  const dmRecipients = [...new Set(rows.filter((r) => r.recipient_type !== 2).map((r) => r.recipient_id))];
  const realm = await getRealmById(db, realmId);
  const [channels, dmParticipants, reactions, edits] = await Promise.all([
    getChannelsByRecipient(db, channelRecipients),
    getDmParticipants(db, dmRecipients),
    getReactions(db, ids),
    realm?.message_edit_history_visibility_policy === 'none' ? Promise.resolve(null) : getEdits(db, ids),
  ]);
  const userIds = new Set(rows.map((r) => r.sender_id));
  for (const list of dmParticipants.values()) for (const id of list) userIds.add(id);
  const users = await getUsersByIds(db, [...userIds]);
  return {
    users,
    channels,
    dmParticipants,
    reactions: groupBy(reactions, (r) => r.message_id),
    edits: edits === null ? null : groupBy(edits, (e) => e.message_id),
    realmStringId: realm?.string_id ?? '',
  };
}

function groupBy<T>(items: T[], key: (t: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
