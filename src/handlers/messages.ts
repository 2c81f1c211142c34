import { getMessages } from '../access/fetch-messages';
import { accessMessage, loadMessageLookups } from '../access/messages';
import { loadViewer } from '../access/viewer';
import { doUpdateFlagsForNarrow, doUpdateMessageFlags } from '../actions/flags';
import { clientFromUserAgent, doSendMessage } from '../actions/messages';
import { doAddReaction, doRemoveReaction } from '../actions/reactions';
import { caller, HandlerTable } from '../http/handler';
import { toApiMessage } from '../serializers/messages';

export const messageHandlers: HandlerTable = {
  'get-messages': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    return (await getMessages(call.ctx.db, viewer, call.params as never, call.sent)) as never;
  },

  'send-message': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    return doSendMessage(call.ctx, viewer, call.params as never, clientFromUserAgent(call.req.headers['user-agent']));
  },

  'get-message': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    const { row, flags } = await accessMessage(call.ctx.db, viewer, call.params.message_id);
    const lookups = await loadMessageLookups(call.ctx.db, viewer.user, [row]);
    const message = toApiMessage(row, flags, lookups, {
      viewer: viewer.user,
      applyMarkdown: call.params.apply_markdown ?? true,
      clientGravatar: false,
      allowEmptyTopicName: call.params.allow_empty_topic_name ?? false,
    });
    return { message, raw_content: row.content } as never;
  },

  'update-message-flags': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    const { messages, op, flag } = call.params;
    const change = await doUpdateMessageFlags(call.ctx, viewer, messages, op, flag);
    return {
      messages,
      ...(op === 'remove' && flag === 'read' ? { ignored_because_not_subscribed_channels: change.ignoredChannels } : {}),
    };
  },

  'update-message-flags-for-narrow': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    return (await doUpdateFlagsForNarrow(call.ctx, viewer, call.params as never, call.sent)) as never;
  },

  'add-reaction': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    const { message_id, ...emoji } = call.params;
    await doAddReaction(call.ctx, viewer, message_id, emoji);
    return {};
  },

  'remove-reaction': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    const { message_id, ...emoji } = call.params;
    await doRemoveReaction(call.ctx, viewer, message_id, emoji);
    return {};
  },
};
