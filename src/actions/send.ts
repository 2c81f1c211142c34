import type { NewRowId, Tx } from '../db/transaction';
import { dmGroupHash } from '../domain/dm';
import { nowSeconds } from '../queries/ids';
import {
  findStoredMessage,
  getDmGroupByHash,
  insertDmGroup,
  insertMessage,
  type MessageRow,
  type NewMessageRow,
} from '../queries/messages';

export interface RenderedContent {
  html: string;
  isMeMessage: boolean;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
}

/** Where a message goes, as its MessageRow records it. */
export interface StoredRecipient {
  id: number;
  type: number;
  typeId: number;
  /** The channel's id and name; null for direct messages. */
  channel: { id: number; name: string } | null;
}

/**
 * A message being inserted: its id (on MySQL/MariaDB a held insert's, known
 * once the transaction's COMMIT is answered: ADR 0026) and the rest of its
 * row as getMessageRow would read it back, so the send path builds its
 * event without another round trip.
 */
export interface InsertedMessage {
  id: NewRowId;
  row: Omit<MessageRow, 'id'>;
}

/**
 * Inserts the message row (callers have validated and rendered it).
 */
export async function insertMessageRow(
  tx: Tx,
  m: {
    realmId: number;
    senderId: number;
    recipient: StoredRecipient;
    topic: string;
    content: string;
    rendered: RenderedContent;
    client: string;
    type?: number;
  },
): Promise<InsertedMessage> {
  const values: NewMessageRow = {
    realm_id: m.realmId,
    sender_id: m.senderId,
    recipient_id: m.recipient.id,
    type: m.type ?? 1,
    topic: m.topic,
    topic_key: m.topic.toLowerCase(),
    content: m.content,
    rendered_content: m.rendered.html,
    rendered_content_version: 1,
    date_sent: nowSeconds(),
    sending_client: m.client,
    is_me_message: m.rendered.isMeMessage,
    has_link: m.rendered.hasLink,
    has_image: m.rendered.hasImage,
    has_attachment: m.rendered.hasAttachment,
  };
  const id = await insertMessage(tx.trx, values);
  // Should the connection drop during COMMIT, this row shows whether the
  // message was saved: if it was, the send succeeds and its events go out
  // (the transaction's first send decides; each send recovers its own id).
  tx.witnessInsert(id, (db, known) => findStoredMessage(db, values, known));
  const row: Omit<MessageRow, 'id'> = {
    ...values,
    last_edit_time: null,
    last_moved_time: null,
    has_edit_history: false,
    has_submessages: false,
    recipient_type: m.recipient.type,
    recipient_type_id: m.recipient.typeId,
    channel_id: m.recipient.channel?.id ?? null,
    channel_name: m.recipient.channel?.name ?? null,
  };
  return { id, row };
}

/**
 * The recipient of a DM conversation, created on first use; its members
 * hold subscription rows (the conversation's audience). Every DM
 * conversation — to oneself, 1:1 or a group — is one such recipient, so
 * both directions of a 1:1 conversation share a recipient_id (ADR 0006).
 */
export async function dmGroupRecipient(
  tx: Tx,
  userIds: readonly number[],
): Promise<{ recipientId: number; groupId: number; created: boolean }> {
  const sorted = [...new Set(userIds)].sort((a, b) => a - b);
  const hash = dmGroupHash(sorted);
  const existing = await getDmGroupByHash(tx.trx, hash);
  if (existing?.recipient_id) return { recipientId: existing.recipient_id, groupId: existing.id, created: false };
  const { groupId, recipientId } = await insertDmGroup(tx.trx, hash, sorted);
  return { recipientId, groupId, created: true };
}
