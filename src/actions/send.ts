import type { Tx } from '../db/transaction';
import { dmGroupHash } from '../domain/dm';
import { insertOne, insertRows, nowSeconds } from '../queries/ids';
import type { MessageRow } from '../queries/messages';
import { RecipientType } from '../domain/recipients';

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
 * Inserts the message row (callers have validated and rendered it) and
 * returns it as getMessageRow would read it back, so the send path builds
 * its event without another round trip.
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
): Promise<MessageRow> {
  const values = {
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
  const id = await insertOne(tx.trx, 'messages', values);
  return {
    id,
    ...values,
    last_edit_time: null,
    last_moved_time: null,
    recipient_type: m.recipient.type,
    recipient_type_id: m.recipient.typeId,
    channel_id: m.recipient.channel?.id ?? null,
    channel_name: m.recipient.channel?.name ?? null,
  };
}

/** One user_messages row per receiver, in batches (a 1,000-subscriber channel is two statements). */
export async function insertUserMessages(tx: Tx, messageId: number, rows: Array<{ userId: number; flags: number }>): Promise<void> {
  // A plain multi-row VALUES list: knex writes SQLite batch inserts as a
  // 100-arm `SELECT … UNION ALL` (for SQLite older than 3.7.11), which took
  // most of a send's time on SQLite, measured.
  for (let i = 0; i < rows.length; i += 500) {
    const slice = rows.slice(i, i + 500);
    await tx.trx.raw(
      `INSERT INTO user_messages (user_id, message_id, flags) VALUES ${slice.map(() => '(?, ?, ?)').join(', ')}`,
      slice.flatMap((r) => [r.userId, messageId, r.flags]),
    );
  }
}

/**
 * The recipient of a DM conversation, created on first use; its members
 * hold subscription rows (the conversation's audience). Every DM
 * conversation — to oneself, 1:1 or a group — is one such recipient, so
 * both directions of a 1:1 conversation share a recipient_id (ADR 0006).
 */
export async function dmGroupRecipient(tx: Tx, userIds: number[]): Promise<{ recipientId: number; groupId: number; created: boolean }> {
  const sorted = [...new Set(userIds)].sort((a, b) => a - b);
  const hash = dmGroupHash(sorted);
  const existing = await tx.trx('dm_groups').where({ huddle_hash: hash }).first('id', 'recipient_id');
  if (existing?.recipient_id) return { recipientId: existing.recipient_id, groupId: existing.id, created: false };
  const groupId = await insertOne(tx.trx, 'dm_groups', { huddle_hash: hash, group_size: sorted.length });
  const recipientId = await insertOne(tx.trx, 'recipients', { type: RecipientType.DM_GROUP, type_id: groupId });
  await tx.trx('dm_groups').where({ id: groupId }).update({ recipient_id: recipientId });
  await insertRows(
    tx.trx,
    'subscriptions',
    sorted.map((user_id) => ({ user_id, recipient_id: recipientId })),
  );
  return { recipientId, groupId, created: true };
}
