import { getMessagesMatchingNarrow } from '../access/matches-narrow';
import { getMessage, getMessages } from '../access/fetch-messages';
import { getMessageHistory } from '../access/message-history';
import { pageSources } from '../access/message-dicts';
import { doUpdateFlagsForNarrow, doUpdateMessageFlags } from '../actions/flags';
import { clientFromUserAgent, doSendMessage } from '../actions/messages';
import { doUpdateMessage } from '../actions/edit-message';
import { doAddReaction, doRemoveReaction } from '../actions/reactions';
import { doDeleteMessage, doDeleteTopic } from '../actions/message-delete';
import { doReportMessage } from '../actions/report';
import { getRenderedPreview } from '../actions/render';
import { doAddSubmessage } from '../actions/submessages';
import { caller, HandlerTable } from '../http/handler';

export const messageHandlers: HandlerTable = {
  'get-messages': async (call) => {
    const viewer = caller(call);
    return getMessages(call.ctx.db, pageSources(call.ctx), viewer, call.params, call.sent);
  },

  'send-message': async (call) => {
    const viewer = caller(call);
    return doSendMessage(call.ctx, viewer, call.params, clientFromUserAgent(call.req.headers['user-agent']));
  },

  'check-messages-match-narrow': async (call) => getMessagesMatchingNarrow(call.ctx.db, pageSources(call.ctx), caller(call), call.params),

  'get-message': async (call) => {
    const viewer = caller(call);
    return getMessage(call.ctx.db, pageSources(call.ctx), viewer, call.params);
  },

  'update-message-flags': async (call) => {
    const viewer = caller(call);
    return doUpdateMessageFlags(call.ctx, viewer, call.params);
  },

  'update-message-flags-for-narrow': async (call) => {
    const viewer = caller(call);
    return doUpdateFlagsForNarrow(call.ctx, viewer, call.params, call.sent);
  },

  'add-reaction': async (call) => {
    const viewer = caller(call);
    return doAddReaction(call.ctx, viewer, call.params);
  },

  'remove-reaction': async (call) => {
    const viewer = caller(call);
    return doRemoveReaction(call.ctx, viewer, call.params);
  },

  'update-message': async (call) => {
    const viewer = caller(call);
    return doUpdateMessage(call.ctx, viewer, call.params);
  },

  'get-message-history': async (call) => {
    const viewer = caller(call);
    return getMessageHistory(call.ctx.db, viewer, call.params);
  },

  'report-message': async (call) => {
    const viewer = caller(call);
    return doReportMessage(call.ctx, viewer, call.params);
  },

  'delete-message': async (call) => {
    const viewer = caller(call);
    return doDeleteMessage(call.ctx, viewer, call.params);
  },

  'delete-topic': async (call) => {
    const viewer = caller(call);
    return doDeleteTopic(call.ctx, viewer, call.params);
  },

  'render-message': async (call) => {
    const viewer = caller(call);
    return { rendered: await getRenderedPreview(call.ctx, viewer, call.params.content) };
  },

  'add-submessage': async (call) => {
    const viewer = caller(call);
    await doAddSubmessage(call.ctx, viewer, call.params);
    return {};
  },
};
