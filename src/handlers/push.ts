import { doRegisterClientDevice, doRemoveClientDevice } from '../actions/client-devices';
import { doAddApnsToken, doAddFcmToken, doRemoveApnsToken, doRemoveFcmToken } from '../actions/legacy-push-tokens';
import { doRegisterPushDevice } from '../actions/push-register';
import { caller, HandlerTable } from '../http/handler';

export const pushHandlers: HandlerTable = {
  'register-client-device': async (call) => doRegisterClientDevice(call.ctx, caller(call).user),
  'remove-client-device': async (call) => doRemoveClientDevice(call.ctx, caller(call).user, call.params.device_id),
  'register-push-device': async (call) => doRegisterPushDevice(call.ctx, caller(call).user, caller(call).realm, call.params),
  'add-apns-token': async (call) => doAddApnsToken(call.ctx, caller(call).user, call.params),
  'remove-apns-token': async (call) => doRemoveApnsToken(call.ctx, caller(call).user, call.params),
  'add-fcm-token': async (call) => doAddFcmToken(call.ctx, caller(call).user, call.params),
  'remove-fcm-token': async (call) => doRemoveFcmToken(call.ctx, caller(call).user, call.params),
};
