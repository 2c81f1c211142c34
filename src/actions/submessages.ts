import { RecipientType } from '../domain/recipients';
import { applyParticipationPolicyInTx } from './automatic-topic-policies';
import type { Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { accessMessage } from '../access/messages';
import type { Viewer } from '../access/viewer';
import { inTransaction } from '../db/transaction';
import { invalidateMessagesAfterCommit } from './message-invalidation';
import { checkPollData, checkTodoData, widgetTypeOf } from '../domain/widgets';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { countSubmessagesUpTo, getWidgetSubmessage, hasSubmessageFrom, insertSubmessage, listMessageUserIds } from '../queries/submessages';

/**
 * Parley's bound on a message's submessages (Zulip has none): each vote or
 * task is one, and every fetch of the message carries them all. A poll
 * voted on by an organization of thousands still fits.
 */
export const MAX_SUBMESSAGES_PER_MESSAGE = 10_000;

/**
 * POST /submessage: an update to a message's widget (a vote, a new option,
 * a task), from anyone who can read the message. As in Zulip, the message's
 * own sender must attach the first submessage (the widget is theirs to
 * create); updates to a poll or to-do list are checked against its rules,
 * other widgets' data only for being JSON. A submessage event goes to every
 * user who received the message, after commit.
 */
export async function doAddSubmessage(ctx: AppContext, viewer: Viewer, p: Params<'add-submessage'>): Promise<void> {
  const { row: message } = await accessMessage(ctx.db, viewer, p.message_id);
  const userId = viewer.user.id;
  await inTransaction(ctx.db, async (tx) => {
    if (message.sender_id !== userId && !(await hasSubmessageFrom(tx.trx, message.id, message.sender_id))) {
      throw new ApiError('You cannot attach a submessage to this message.');
    }
    let data: unknown;
    try {
      data = JSON.parse(p.content);
    } catch {
      throw new ApiError('Invalid json for submessage');
    }
    // Every fetch of the message carries all its submessages: their number is bounded.
    if ((await countSubmessagesUpTo(tx.trx, message.id, MAX_SUBMESSAGES_PER_MESSAGE)) >= MAX_SUBMESSAGES_PER_MESSAGE) {
      throw new ApiError(`A message may have at most ${MAX_SUBMESSAGES_PER_MESSAGE} submessages.`);
    }
    const widgetType = widgetTypeOf(await getWidgetSubmessage(tx.trx, message.id));
    const isAuthor = message.sender_id === userId;
    if (widgetType === 'poll') checkPollData(data, isAuthor);
    if (widgetType === 'todo') checkTodoData(data, isAuthor);
    const id = await insertSubmessage(tx.trx, { message_id: message.id, sender_id: userId, msg_type: p.msg_type, content: p.content });
    // A vote or a new option is participating in the topic (automatic follow/unmute settings).
    if (message.recipient_type === RecipientType.CHANNEL) {
      await applyParticipationPolicyInTx(
        tx,
        ctx,
        viewer.user,
        { id: message.recipient_type_id, recipient_id: message.recipient_id },
        message.topic,
      );
    }
    const audience = await listMessageUserIds(tx.trx, message.id);
    const event: EventBody<Schema<'SubmessageEvent'>> = {
      type: 'submessage',
      msg_type: p.msg_type,
      message_id: message.id,
      submessage_id: id,
      sender_id: userId,
      content: p.content,
    };
    invalidateMessagesAfterCommit(tx, ctx.bus, () => [message.id]);
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: audience }));
  });
}
