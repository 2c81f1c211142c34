import { accessChannelContent } from '../access/channels';
import { fetchAround, LARGER_THAN_MAX_MESSAGE_ID } from '../access/fetch-messages';
import { resolveNarrow } from '../access/narrow';
import type { Viewer } from '../access/viewer';
import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { parseNarrow } from '../domain/narrow';
import { bounded } from '../domain/bounded';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { ApiError, invalidChannelId } from '../errors';
import type { PublishedEvent } from '../events/shape';
import { userHasMessageInTopic } from '../queries/topic-rows';
import { applyFlagInTx, queueFlagEvent } from './flags';
import { doAdvanceUnreadHorizon } from './unread-horizon';

/**
 * The legacy bulk mark-as-read operations, which Zulip keeps though it
 * deprecates them for POST /messages/flags/narrow. Each marks the unread
 * messages of its scope newest first, `markReadBatchSize` per transaction
 * (each committed on its own), so progress is kept whatever happens later.
 */

/** One batch: the newest unread messages of the scope marked read; how many were found and how many changed. */
async function markBatch(
  ctx: AppContext,
  viewer: Viewer,
  terms: unknown[],
  batchSize: number,
  eachBatchEvent: boolean,
): Promise<{ found: number; changed: number }> {
  const { query } = await resolveNarrow(ctx.db, viewer, parseNarrow([{ operator: 'is', operand: 'unread' }, ...terms]));
  const page = await fetchAround(ctx.db, query, LARGER_THAN_MAX_MESSAGE_ID, batchSize, 0, true);
  const ids = page.rows.map((r) => r.id);
  if (ids.length === 0) return { found: 0, changed: 0 };
  const changed = await inTransaction(ctx.db, async (tx) => {
    const c = await applyFlagInTx(tx, viewer, ids, 'add', 'read');
    if (eachBatchEvent) await queueFlagEvent(ctx, tx, viewer, 'add', 'read', c.changed);
    return c.changed.length;
  });
  return { found: ids.length, changed };
}

/**
 * Marks the scope read batch by batch until a batch finds fewer than a
 * full batch (or changes nothing: another request read them meanwhile), or
 * until `budgetMs` has passed before a new batch; whether it finished.
 */
async function markScope(ctx: AppContext, viewer: Viewer, terms: unknown[], budgetMs: number | null, eachBatchEvent: boolean) {
  const batchSize = ctx.config.markReadBatchSize;
  const started = ctx.clock.now();
  let complete = false;
  for (;;) {
    if (budgetMs !== null && ctx.clock.now() - started >= budgetMs) break;
    const { found, changed } = await markBatch(ctx, viewer, terms, batchSize, eachBatchEvent);
    if (found < batchSize || changed === 0) {
      complete = true;
      break;
    }
  }
  // As POST /messages/flags does after marking messages read (ADR 0024).
  await doAdvanceUnreadHorizon(ctx.db, viewer.user);
  return complete;
}

/**
 * POST /mark_all_as_read: every unread message of the caller's, in
 * batches; after `markReadTimeBudgetMs` the answer is complete:false and
 * the client sends the request again (Zulip's contract since feature level
 * 211). As Zulip does, the caller's clients are told once, when the last
 * batch is done: one update_message_flags event with `all: true` and no
 * message IDs.
 */
export async function doMarkAllAsRead(ctx: AppContext, viewer: Viewer): Promise<Data<'mark-all-as-read'>> {
  const complete = await markScope(ctx, viewer, [], ctx.config.markReadTimeBudgetMs, false);
  if (complete) {
    const event: PublishedEvent<Schema<'UpdateMessageFlagsEvent'>> = {
      type: 'update_message_flags',
      op: 'add',
      operation: 'add',
      flag: 'read',
      messages: [],
      all: true,
    };
    ctx.bus.publish({ event, userIds: [viewer.user.id] });
  }
  return { complete };
}

/** The channel of a mark-as-read request, as Zulip's access_stream_by_id finds it: readable and not archived. */
async function accessChannelToMark(ctx: AppContext, viewer: Viewer, channelId: number) {
  const channel = await accessChannelContent(ctx.db, viewer, channelId);
  if (channel.deactivated) throw invalidChannelId();
  return channel;
}

/** POST /mark_stream_as_read: the channel's unread messages; update_message_flags with their IDs, as POST /messages/flags sends. */
export async function doMarkChannelAsRead(
  ctx: AppContext,
  viewer: Viewer,
  p: Params<'mark-stream-as-read'>,
): Promise<Data<'mark-stream-as-read'>> {
  const channel = await accessChannelToMark(ctx, viewer, p.stream_id);
  await markScope(ctx, viewer, [{ operator: 'channel', operand: channel.id }], null, true);
  return {};
}

/**
 * POST /mark_topic_as_read: the topic's unread messages. A named topic in
 * which the caller received no message is Zulip's "No such topic"; the
 * organization's name for the empty topic means the empty topic.
 */
export async function doMarkTopicAsRead(
  ctx: AppContext,
  viewer: Viewer,
  p: Params<'mark-topic-as-read'>,
): Promise<Data<'mark-topic-as-read'>> {
  const channel = await accessChannelToMark(ctx, viewer, p.stream_id);
  const topic = p.topic_name === EMPTY_TOPIC_DISPLAY_NAME ? '' : p.topic_name;
  if (topic !== '' && !(await userHasMessageInTopic(ctx.db, viewer.user.id, channel.recipient_id, topic.toLowerCase()))) {
    throw new ApiError(`No such topic '${bounded(topic)}'`);
  }
  const terms = [
    { operator: 'channel', operand: channel.id },
    { operator: 'topic', operand: topic },
  ];
  await markScope(ctx, viewer, terms, null, true);
  return {};
}
