import { doCreateReminder, doDeleteReminder, getReminders } from '../actions/reminders';
import { clientFromUserAgent } from '../actions/messages';
import { caller, HandlerTable } from '../http/handler';

export const reminderHandlers: HandlerTable = {
  'get-reminders': async (call) => getReminders(call.ctx, caller(call).user),
  'create-message-reminder': async (call) =>
    doCreateReminder(call.ctx, caller(call), call.params, clientFromUserAgent(call.req.headers['user-agent'])),
  'delete-reminder': async (call) => doDeleteReminder(call.ctx, caller(call).user, call.params),
};
