import { doRegisterPushDevice } from '../actions/push-register';
import { caller, HandlerTable } from '../http/handler';

export const pushHandlers: HandlerTable = {
  'register-push-device': async (call) => doRegisterPushDevice(call.ctx, caller(call), call.params),
};
