import type { Schema } from '../contract';
import type { Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';
import type { PublishedEvent } from '../events/shape';
import {
  archiveMessages,
  archiveTransactionHolds,
  createArchiveTransaction,
  deleteArchiveTransaction,
  getOldestMessageId,
  listUserIdsWithRows,
  updateChannelFirstMessageId,
} from '../queries/archive';
import { listAttachmentsLinkedTo } from '../queries/attachments';
import type { ChannelRow } from '../queries/channels';
import { invalidateMessagesAfterCommit } from './message-invalidation';
import { queueAttachmentEvents } from './uploads';

/**
 * Moving messages into the archive with everything clients must hear about
 * it: what a deletion (src/actions/message-delete.ts) and the retention
 * policy (src/actions/retention.ts) share. The messages, of one organization,
 * come as conversations: one channel topic, or one direct-message
 * conversation; each conversation is one delete_message event.
 */
export interface ArchivedConversation {
  /** The channel, for channel messages; null for direct messages. */
  channel: ChannelRow | null;
  /** The topic as the event names it (the lower-cased topic key); channel messages only. */
  topicKey: string;
  ids: number[];
}

export interface ArchiveBatch {
  realmId: number;
  conversations: ArchivedConversation[];
  /** Zulip's ArchiveTransaction type (ArchiveType). */
  archiveType: number;
  /** UNIX seconds: archived_at and the archive transaction's time. */
  now: number;
  /** Who deleted (hears the events even without rows of their own); null for the retention policy. */
  actingUserId: number | null;
}

/**
 * Archives the batch in the caller's transaction (one archive transaction
 * row, then archiveMessages' fixed number of statements per ARCHIVE_CHUNK
 * ids) and queues, after commit: the message caches' invalidation, a stream
 * update of first_message_id when a channel lost its recorded first message,
 * one delete_message per conversation — each to the users holding a row for
 * its messages, plus the acting user — and `attachment update` to the owners
 * of files the messages linked. Returns how many messages were moved (a
 * concurrent deletion may have taken some first).
 */
export async function archiveConversationsInTx(tx: Tx, bus: EventBus, batch: ArchiveBatch): Promise<number> {
  const conversations = batch.conversations.filter((c) => c.ids.length > 0);
  const all = conversations.flatMap((c) => c.ids).sort((a, b) => a - b);
  if (all.length === 0) return 0;
  const audiences: number[][] = [];
  for (const c of conversations) {
    const audience = new Set(await listUserIdsWithRows(tx.trx, c.ids));
    if (batch.actingUserId !== null) audience.add(batch.actingUserId);
    audiences.push([...audience].sort((a, b) => a - b));
  }
  const linkedUploads = await listAttachmentsLinkedTo(tx.trx, all);
  const transactionId = await createArchiveTransaction(tx.trx, batch.realmId, batch.archiveType, batch.now);
  const deleted = await archiveMessages(tx.trx, all, batch.now, batch.archiveType, transactionId);
  if (deleted === 0) {
    await deleteArchiveTransaction(tx.trx, transactionId);
    return 0;
  }
  // Should COMMIT's answer be lost, the archived rows say whether the batch is stored.
  tx.witness((db) => archiveTransactionHolds(db, transactionId, all[0]!));
  // Reads find no archived message (their rows are gone), but GET /messages/{id}
  // must not answer from a dict, and the memory is better spent elsewhere.
  invalidateMessagesAfterCommit(tx, bus, () => all);

  // A channel whose recorded first message went: the new oldest (or null), to
  // everyone who heard of the deletion in that channel. Only then: a channel
  // whose first message was deleted before first_message_id was kept up to
  // date stays as it is (as in Zulip).
  const channels = new Map<number, { channel: ChannelRow; audience: Set<number> }>();
  conversations.forEach((c, i) => {
    if (!c.channel) return;
    const entry = channels.get(c.channel.id) ?? { channel: c.channel, audience: new Set<number>() };
    for (const u of audiences[i]!) entry.audience.add(u);
    channels.set(c.channel.id, entry);
  });
  const gone = new Set(all);
  for (const { channel, audience } of channels.values()) {
    if (channel.first_message_id === null || !gone.has(channel.first_message_id)) continue;
    const first = await getOldestMessageId(tx.trx, batch.realmId, channel.recipient_id);
    await updateChannelFirstMessageId(tx.trx, channel.id, first);
    const update: PublishedEvent<Schema<'StreamUpdateEvent'>> = {
      type: 'stream',
      op: 'update',
      property: 'first_message_id',
      value: first,
      stream_id: channel.id,
      name: channel.name,
    };
    const userIds = [...audience].sort((a, b) => a - b);
    tx.afterCommit(() => bus.publish({ event: update, userIds }));
  }

  conversations.forEach((c, i) => {
    const ids = [...c.ids].sort((a, b) => a - b);
    const event: PublishedEvent<Schema<'DeleteMessageEvent'>> = c.channel
      ? // Zulip groups a deletion by channel and lower-cased topic, and names the
        // topic in the event by that key: clients compare topics case-insensitively.
        { type: 'delete_message', message_type: 'stream', message_ids: ids, stream_id: c.channel.id, topic: c.topicKey }
      : { type: 'delete_message', message_type: 'private', message_ids: ids };
    const userIds = audiences[i]!;
    tx.afterCommit(() => bus.publish({ event, userIds }));
  });
  // The owners of the files these messages linked hear the shorter list of
  // linking messages (`attachment update`), so an uploads list stays true.
  // Zulip's deletion sends no attachment event (its record leaves the live
  // table when no live message links it, and clients learn of it on reload);
  // Parley keeps the record (an archived link still claims the file) and
  // says what changed, as it does when an edit drops a link.
  await queueAttachmentEvents(bus, tx, 'update', batch.realmId, linkedUploads);
  return deleted;
}
