import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { inTransaction, Tx } from '../db/transaction';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { adminRequired, ApiError, invalidChannelId } from '../errors';
import { accessMessageForChange } from '../access/messages';
import { canReadChannelHistory, inGroup, isAdminViewer, Caller, Viewer } from '../access/viewer';
import type { EventBus } from '../events/bus';
import { ArchiveType, listTopicMessageIdsNewestFirst } from '../queries/archive';
import { ChannelRow, getChannelById } from '../queries/channels';
import { getUsersByIds, MessageRow } from '../queries/messages';
import type { RealmRow, UserRow } from '../queries/rows';
import { archiveConversationsInTx } from './message-archive';

/**
 * Deleting messages (DELETE /messages/{id}, POST /streams/{id}/delete_topic).
 * A deleted message is archived, not dropped (src/queries/archive.ts); the
 * users who held a row for it hear a delete_message event after commit, and
 * if the channel lost its oldest message, a stream update of first_message_id.
 */

const noPermission = () => new ApiError("You don't have permission to delete this message");

/**
 * Zulip's validate_can_delete_message. In order:
 * - members of the organization's can_delete_any_message_group (by default
 *   its administrators) may delete anything, at any age;
 * - so may members of the channel's can_delete_any_message_group;
 * - anyone else only their own messages or their bots';
 * - and only as a member of the organization's can_delete_own_message_group,
 *   or, for channel messages, of the channel's (either grants it);
 * - within message_content_delete_limit_seconds (null: no limit). The limit
 *   binds administrators too unless they are in a can_delete_any group:
 *   Zulip has no role exemption here, unlike for edits and moves.
 */
export function checkCanDeleteMessage(
  viewer: Viewer,
  realm: Pick<RealmRow, 'can_delete_any_message_group' | 'can_delete_own_message_group' | 'message_content_delete_limit_seconds'>,
  message: Pick<MessageRow, 'date_sent'>,
  sender: Pick<UserRow, 'id' | 'bot_owner_id'>,
  channel: Pick<ChannelRow, 'can_delete_any_message_group' | 'can_delete_own_message_group'> | null,
  now: number,
): void {
  if (inGroup(viewer, realm.can_delete_any_message_group)) return;
  if (channel && inGroup(viewer, channel.can_delete_any_message_group)) return;
  if (sender.id !== viewer.user.id && sender.bot_owner_id !== viewer.user.id) throw noPermission();
  if (!inGroup(viewer, realm.can_delete_own_message_group) && !(channel && inGroup(viewer, channel.can_delete_own_message_group)))
    throw noPermission();
  const limit = realm.message_content_delete_limit_seconds;
  if (limit != null && now - message.date_sent > limit) throw new ApiError('The time limit for deleting this message has passed');
}

/** What one deletion concerns: messages of one conversation (one channel topic, or one DM conversation). */
interface Conversation {
  realmId: number;
  /** The channel, for channel messages; null for direct messages. */
  channel: ChannelRow | null;
  /** The topic as the event names it (see src/actions/message-archive.ts); channel messages only. */
  topicKey: string;
}

/**
 * Archives the messages (ids of one conversation) as a manual deletion and
 * queues the events (src/actions/message-archive.ts): they go to the users
 * holding a row for any of the messages, plus the acting user (who may have
 * deleted history they never received). Returns how many messages were
 * actually deleted (a concurrent deletion may have taken some first).
 */
async function deleteMessagesInTx(tx: Tx, bus: EventBus, conv: Conversation, ids: number[], actingUserId: number): Promise<number> {
  return archiveConversationsInTx(tx, bus, {
    realmId: conv.realmId,
    conversations: [{ channel: conv.channel, topicKey: conv.topicKey, ids }],
    archiveType: ArchiveType.MANUAL,
    now: Math.floor(Date.now() / 1000),
    actingUserId,
  });
}

/** DELETE /messages/{message_id}. */
export async function doDeleteMessage(ctx: AppContext, viewer: Caller, p: Params<'delete-message'>): Promise<Data<'delete-message'>> {
  const realm = viewer.realm;
  await inTransaction(ctx.db, async (tx) => {
    const { row, channel } = await accessMessageForChange(tx.trx, viewer, p.message_id);
    const sender = (await getUsersByIds(tx.trx, [row.sender_id])).get(row.sender_id)!;
    checkCanDeleteMessage(viewer, realm, row, sender, channel, Math.floor(Date.now() / 1000));
    const deleted = await deleteMessagesInTx(
      tx,
      ctx.bus,
      { realmId: viewer.user.realm_id, channel, topicKey: row.topic_key },
      [row.id],
      viewer.user.id,
    );
    if (deleted === 0) throw new ApiError('Message already deleted');
  });
  return {};
}

/**
 * POST /streams/{stream_id}/delete_topic: administrators only. Deletes the
 * topic's messages newest first, `deleteTopicBatchSize` per transaction, so
 * a topic too large for one request still makes progress: once
 * `deleteTopicTimeBudgetMs` has passed, no new batch starts and the answer is
 * complete:false, which tells the client to send the request again. In a
 * private channel with protected history only the messages the
 * administrator received are deleted (the others are not theirs to see).
 */
export async function doDeleteTopic(ctx: AppContext, viewer: Viewer, p: Params<'delete-topic'>): Promise<Data<'delete-topic'>> {
  if (!isAdminViewer(viewer)) throw adminRequired();
  const channel = await getChannelById(ctx.db, viewer.user.realm_id, p.stream_id);
  if (!channel) throw invalidChannelId();
  const fullHistory = canReadChannelHistory(viewer, channel);
  if (!fullHistory && !viewer.subscribedRecipients.has(channel.recipient_id)) throw invalidChannelId();
  // The realm's name for the empty topic means the empty topic (it is never trimmed here, as in Zulip).
  const topicKey = (p.topic_name === EMPTY_TOPIC_DISPLAY_NAME ? '' : p.topic_name).toLowerCase();
  const onlyWithRowOf = fullHistory ? null : viewer.user.id;
  const { deleteTopicBatchSize: batchSize, deleteTopicTimeBudgetMs: budget } = ctx.config;
  const started = ctx.clock.now();
  for (;;) {
    if (ctx.clock.now() - started >= budget) return { complete: false };
    const done = await inTransaction(ctx.db, async (tx) => {
      const ids = await listTopicMessageIdsNewestFirst(tx.trx, channel.recipient_id, topicKey, batchSize, onlyWithRowOf);
      if (ids.length === 0) return true;
      // Read again in the transaction: an earlier batch may have moved first_message_id.
      const current = (await getChannelById(tx.trx, viewer.user.realm_id, channel.id))!;
      await deleteMessagesInTx(tx, ctx.bus, { realmId: viewer.user.realm_id, channel: current, topicKey }, ids, viewer.user.id);
      return false;
    });
    if (done) return { complete: true };
  }
}
