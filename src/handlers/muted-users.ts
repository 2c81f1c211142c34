import { doMuteUser, doUnmuteUser } from '../actions/muted-users';
import { caller, HandlerTable } from '../http/handler';

export const mutedUserHandlers: HandlerTable = {
  'mute-user': async (call) => doMuteUser(call.ctx, caller(call), call.params.muted_user_id),
  'unmute-user': async (call) => doUnmuteUser(call.ctx, caller(call), call.params.muted_user_id),
};
