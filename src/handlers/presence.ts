import { getPresence, getUserPresenceOf } from '../access/presence';
import { getUserStatus } from '../access/user-status';
import { doUpdatePresence } from '../actions/presence';
import { doUpdateUserStatus } from '../actions/user-status';
import { caller, HandlerTable } from '../http/handler';

export const presenceHandlers: HandlerTable = {
  'update-presence': async (call) => doUpdatePresence(call.ctx, caller(call), call.params),
  'get-user-presence': async (call) => getUserPresenceOf(call.ctx, caller(call), call.params),
  'get-presence': async (call) => getPresence(call.ctx, caller(call)),
  'update-status': async (call) => doUpdateUserStatus(call.ctx, caller(call).user, call.params),
  'get-user-status': async (call) => getUserStatus(call.ctx, caller(call), call.params),
};
