import type { Knex } from 'knex';
import { invalidMessage } from '../errors';
import { type ChannelRow, getChannelById } from '../queries/channels';
import { getFlagsForUser, getMessageRows, MessageRow } from '../queries/messages';
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
