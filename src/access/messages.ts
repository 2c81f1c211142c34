import type { Knex } from 'knex';
import { invalidMessage } from '../errors';
import { type ChannelRow, getChannelById } from '../queries/channels';
import {
  ChannelRef,
  EditRow,
  getDmParticipantUsers,
  getEdits,
  getFlagsForUser,
  getMessageRows,
  getReactions,
  getUsersByIds,
  MessageRow,
} from '../queries/messages';
import { getRealmOfUser } from '../queries/realms';
import type { UserRow } from '../queries/rows';
import { listSubmessages } from '../queries/submessages';
import type { MessageLookups } from '../serializers/messages';
import { canReadChannelHistory, Viewer } from './viewer';
import { RecipientType } from '../domain/recipients';

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

/**
 * A message the viewer may change (edit, move, delete): readable as for
 * accessMessage, and, for a channel message, readable through the channel
 * now (Zulip's is_modifying_message): none in an archived channel, and a
 * row alone does not do once one has left a private channel whose history
 * is protected. Also returns the channel (null for direct messages).
 */
export async function accessMessageForChange(
  db: Knex,
  viewer: Viewer,
  id: number,
): Promise<AccessibleMessage & { channel: ChannelRow | null }> {
  const found = await accessMessage(db, viewer, id);
  if (found.row.recipient_type !== RecipientType.CHANNEL) return { ...found, channel: null };
  const channel = await getChannelById(db, viewer.user.realm_id, found.row.recipient_type_id);
  if (!channel || channel.deactivated) throw invalidMessage();
  const current = canReadChannelHistory(viewer, channel) || (found.flags !== null && viewer.subscribedRecipients.has(channel.recipient_id));
  if (!current) throw invalidMessage();
  return { ...found, channel };
}

/** The accessible subset of `ids`, in id order (three queries whatever the count). */
export async function accessMessages(db: Knex, viewer: Viewer, ids: number[]): Promise<AccessibleMessage[]> {
  const rows = (await getMessageRows(db, ids)).filter((r) => r.realm_id === viewer.user.realm_id);
  const flags = await getFlagsForUser(
    db,
    viewer.user.id,
    rows.map((r) => r.id),
  );
  const out: AccessibleMessage[] = [];
  const channelCache = new Map<number, boolean>();
  for (const row of rows) {
    const f = flags.get(row.id);
    if (f !== undefined) {
      out.push({ row, flags: f });
      continue;
    }
    if (row.recipient_type !== RecipientType.CHANNEL) continue;
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

/**
 * Everything the serializer needs for these messages, in a fixed number of
 * queries: reactions and the senders always; DM participants only for direct
 * messages; edit history only when a message was edited or moved (most never are).
 * `viewer` is the requesting user (their organization row comes with authentication).
 */
export async function loadMessageLookups(db: Knex, viewer: Pick<UserRow, 'realm_id'>, rows: MessageRow[]): Promise<MessageLookups> {
  const ids = rows.map((r) => r.id);
  const channels = new Map<number, ChannelRef>();
  const dmRecipients = new Set<number>();
  const edited: number[] = [];
  for (const r of rows) {
    if (r.recipient_type === RecipientType.CHANNEL)
      channels.set(r.recipient_id, { id: r.channel_id!, name: r.channel_name!, recipient_id: r.recipient_id });
    else dmRecipients.add(r.recipient_id);
    // The times find messages edited before the marker existed (migration 010).
    if (r.has_edit_history || r.last_edit_time !== null || r.last_moved_time !== null) edited.push(r.id);
  }
  const realm = await getRealmOfUser(db, viewer);
  const policy = realm.message_edit_history_visibility_policy;
  const showEdits = policy !== 'none';
  // All at once: the senders and the DM participants (with their rows) are separate lookups.
  const [participantUsers, reactions, edits, users, submessages] = await Promise.all([
    getDmParticipantUsers(db, [...dmRecipients]),
    getReactions(db, ids),
    showEdits && edited.length ? getEdits(db, edited) : Promise.resolve([]),
    getUsersByIds(
      db,
      rows.map((r) => r.sender_id),
    ),
    listSubmessages(
      db,
      rows.filter((r) => r.has_submessages).map((r) => r.id),
    ),
  ]);
  const dmParticipants = new Map<number, number[]>();
  for (const [recipientId, list] of participantUsers) {
    dmParticipants.set(
      recipientId,
      list.map((u) => u.id),
    );
    for (const u of list) if (!users.has(u.id)) users.set(u.id, u);
  }
  return {
    users,
    channels,
    dmParticipants,
    reactions: groupBy(reactions, (r) => r.message_id),
    submessages: groupBy(submessages, (r) => r.message_id),
    edits: showEdits ? groupBy(policy === 'moves' ? edits.filter(isMove).map(withoutContent) : edits, (e) => e.message_id) : null,
    realmStringId: realm.string_id,
    senderAvatars: new Map(),
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

/*
 * With the 'moves' policy the organization shows only where messages went:
 * edit_history keeps the entries that moved the message (topic or channel)
 * and drops their content fields, so a content edit made with a move leaks
 * nothing either. An allowlist, as Zulip's: a new kind of field stays hidden.
 */
const isMove = (e: EditRow): boolean => e.prev_topic !== null || e.prev_stream !== null;
const withoutContent = (e: EditRow): EditRow => ({ ...e, prev_content: null, prev_rendered_content: null });
