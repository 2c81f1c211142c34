import { doAddApnsToken, doRemoveApnsToken } from '../actions/apns-tokens';
import { caller, HandlerTable } from '../http/handler';

export const apnsTokenHandlers: HandlerTable = {
  'add-apns-token': async (call) => doAddApnsToken(call.ctx, caller(call), call.params),
  'remove-apns-token': async (call) => doRemoveApnsToken(call.ctx, caller(call), call.params),
};
