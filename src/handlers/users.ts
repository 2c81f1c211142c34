import { getOwnUser, getUser, getUsers } from '../access/users';
import { loadViewer } from '../access/viewer';
import { doUpdateUser } from '../actions/update-user';
import { doCreateUser, doDeactivateUser, doReactivateUser } from '../actions/users';
import { caller, HandlerTable } from '../http/handler';

export const userHandlers: HandlerTable = {
  'get-own-user': async (call) => getOwnUser(call.ctx, caller(call)) as never,

  'get-users': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    const { client_gravatar, include_custom_profile_fields } = call.params;
    const opts = { clientGravatar: client_gravatar ?? true, includeCustomProfileFields: include_custom_profile_fields ?? false };
    return (await getUsers(call.ctx, viewer, opts)) as never;
  },

  'get-user': async (call) => {
    const viewer = await loadViewer(call.ctx.db, caller(call));
    const { user_id, client_gravatar, include_custom_profile_fields } = call.params;
    const opts = { clientGravatar: client_gravatar ?? true, includeCustomProfileFields: include_custom_profile_fields ?? false };
    return (await getUser(call.ctx, viewer, user_id, opts)) as never;
  },

  'create-user': async (call) => {
    const { email, password, full_name } = call.params;
    const user = await doCreateUser(call.ctx, caller(call), { email, password, full_name });
    return { user_id: user.id };
  },

  'update-user': async (call) => {
    const { user_id, full_name, role, profile_data, new_email } = call.params;
    await doUpdateUser(call.ctx, caller(call), user_id, { full_name, role, profile_data, new_email });
    return {};
  },

  'deactivate-user': async (call) => {
    await doDeactivateUser(call.ctx, call.params.user_id, caller(call));
    return {};
  },

  'reactivate-user': async (call) => {
    await doReactivateUser(call.ctx, caller(call), call.params.user_id);
    return {};
  },
};
