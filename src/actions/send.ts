import crypto from 'node:crypto';
import type { Tx } from '../db/transaction';
import { flagMask } from '../domain/flags';
import { renderMarkdown } from '../markdown/render';
import { insertOne, nowSeconds } from '../queries/ids';
import type { UserRow } from '../queries/rows';

export interface StoredMessage {
  id: number;
  recipientId: number;
  receiverIds: number[];
}

/**
 * Stores a channel message with a user_messages row for every active
 * subscriber; the sender's own copy starts read. (Validation, permissions,
 * mentions and events are the callers'.)
 */
export async function storeChannelMessageInTx(
  tx: Tx,
  sender: UserRow,
  channel: { id: number; recipient_id: number; first_message_id: number | null },
  topic: string,
  content: string,
  client = 'API',
): Promise<StoredMessage> {
  const subscriberIds: number[] = await tx.trx('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.recipient_id': channel.recipient_id, 's.active': true, 'u.is_active': true })
    .pluck('s.user_id');
  const id = await insertMessageRow(tx, sender, channel.recipient_id, topic, content, client);
  await insertUserMessages(tx, id, sender.id, subscriberIds, 0);
  if (channel.first_message_id === null) {
    await tx.trx('channels').where({ id: channel.id }).whereNull('first_message_id').update({ first_message_id: id });
  }
  return { id, recipientId: channel.recipient_id, receiverIds: subscriberIds };
}

/** Stores a direct message (1:1, to oneself, or to a group) with rows for every participant. */
export async function storeDirectMessageInTx(
  tx: Tx,
  sender: UserRow,
  recipients: UserRow[],
  content: string,
  client = 'API',
): Promise<StoredMessage> {
  const others = recipients.filter((u) => u.id !== sender.id);
  const participants = [sender, ...others];
  let recipientId: number;
  if (others.length <= 1) {
    // A 1:1 DM is stored against the other user's personal recipient (one's own for a note to self).
    recipientId = (others[0] ?? sender).recipient_id!;
  } else {
    recipientId = await dmGroupRecipient(tx, participants.map((u) => u.id));
  }
  const id = await insertMessageRow(tx, sender, recipientId, '', content, client);
  await insertUserMessages(tx, id, sender.id, participants.map((u) => u.id), flagMask('is_private'));
  return { id, recipientId, receiverIds: participants.map((u) => u.id) };
}

/** The recipient of a DM group, created on first use; its members hold Subscription rows (the audience). */
async function dmGroupRecipient(tx: Tx, userIds: number[]): Promise<number> {
  const sorted = [...new Set(userIds)].sort((a, b) => a - b);
  const hash = crypto.createHash('sha1').update(sorted.join(',')).digest('hex');
  const existing = await tx.trx('dm_groups').where({ huddle_hash: hash }).first('recipient_id');
  if (existing?.recipient_id) return existing.recipient_id;
  const groupId = await insertOne(tx.trx, 'dm_groups', { huddle_hash: hash, group_size: sorted.length });
  const recipientId = await insertOne(tx.trx, 'recipients', { type: 3, type_id: groupId });
  await tx.trx('dm_groups').where({ id: groupId }).update({ recipient_id: recipientId });
  for (const userId of sorted) await tx.trx('subscriptions').insert({ user_id: userId, recipient_id: recipientId });
  return recipientId;
}

async function insertMessageRow(tx: Tx, sender: UserRow, recipientId: number, topic: string, content: string, client: string) {
  const rendered = renderMarkdown(content);
  return insertOne(tx.trx, 'messages', {
    realm_id: sender.realm_id,
    sender_id: sender.id,
    recipient_id: recipientId,
    topic,
    topic_key: topic.toLowerCase(),
    content,
    rendered_content: rendered,
    rendered_content_version: 1,
    date_sent: nowSeconds(),
    sending_client: client,
    is_me_message: /^\/me\s/.test(content),
    has_link: /<a href=/.test(rendered),
    has_image: /<img /.test(rendered),
    has_attachment: /\/user_uploads\//.test(content),
  });
}

async function insertUserMessages(tx: Tx, messageId: number, senderId: number, userIds: number[], baseFlags: number) {
  const rows = [...new Set(userIds)].map((user_id) => ({
    user_id,
    message_id: messageId,
    flags: baseFlags + (user_id === senderId ? flagMask('read') : 0),
  }));
  for (let i = 0; i < rows.length; i += 500) await tx.trx('user_messages').insert(rows.slice(i, i + 500));
}
