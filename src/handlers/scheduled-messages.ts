import {
  doCreateScheduledMessage,
  doDeleteScheduledMessage,
  doUpdateScheduledMessage,
  getScheduledMessages,
} from '../actions/scheduled-messages';
import { clientFromUserAgent } from '../actions/messages';
import { caller, HandlerTable } from '../http/handler';

export const scheduledMessageHandlers: HandlerTable = {
  'get-scheduled-messages': async (call) => getScheduledMessages(call.ctx, caller(call).user),
  'create-scheduled-message': async (call) =>
    doCreateScheduledMessage(call.ctx, caller(call), call.params, clientFromUserAgent(call.req.headers['user-agent'])),
  'update-scheduled-message': async (call) =>
    doUpdateScheduledMessage(call.ctx, caller(call), call.params, clientFromUserAgent(call.req.headers['user-agent'])),
  'delete-scheduled-message': async (call) => doDeleteScheduledMessage(call.ctx, caller(call).user, call.params),
};
