import {
  doCreateProfileField,
  doDeleteProfileField,
  doRemoveOwnProfileData,
  doReorderProfileFields,
  doUpdateOwnProfileData,
  doUpdateProfileField,
  listProfileFields,
} from '../actions/profile-fields';
import { caller, type HandlerTable } from '../http/handler';

export const profileFieldHandlers: HandlerTable = {
  'get-custom-profile-fields': async (call) => listProfileFields(call.ctx, caller(call).user),
  'create-custom-profile-field': async (call) => doCreateProfileField(call.ctx, caller(call).user, call.params),
  'reorder-custom-profile-fields': async (call) => {
    await doReorderProfileFields(call.ctx, caller(call).user, call.params.order);
    return {};
  },
  'update-custom-profile-field': async (call) => {
    await doUpdateProfileField(call.ctx, caller(call).user, call.params);
    return {};
  },
  'delete-custom-profile-field': async (call) => {
    await doDeleteProfileField(call.ctx, caller(call).user, call.params.field_id);
    return {};
  },
  'update-own-profile-data': async (call) => {
    await doUpdateOwnProfileData(call.ctx, caller(call).user, call.params.data);
    return {};
  },
  'remove-own-profile-data': async (call) => {
    await doRemoveOwnProfileData(call.ctx, caller(call).user, call.params.data);
    return {};
  },
};
