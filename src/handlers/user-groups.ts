import { doCreateUserGroup } from '../actions/user-group-create';
import { doUpdateUserGroupMembers } from '../actions/user-group-members';
import { doUpdateUserGroupSubgroups } from '../actions/user-group-subgroups';
import { doDeactivateUserGroup, doUpdateUserGroup } from '../actions/user-group-update';
import { getIsUserGroupMember, getUserGroupMembers, getUserGroups, getUserGroupSubgroups } from '../access/user-groups';
import { caller, HandlerTable } from '../http/handler';

export const userGroupHandlers: HandlerTable = {
  'get-user-groups': async (call) => getUserGroups(call.ctx.db, caller(call).user, call.params),

  'get-is-user-group-member': async (call) => getIsUserGroupMember(call.ctx.db, caller(call).user, call.params),

  'get-user-group-members': async (call) => getUserGroupMembers(call.ctx.db, caller(call).user, call.params),

  'get-user-group-subgroups': async (call) => getUserGroupSubgroups(call.ctx.db, caller(call).user, call.params),

  'create-user-group': async (call) => doCreateUserGroup(call.ctx, caller(call), call.params),

  'update-user-group': async (call) => {
    await doUpdateUserGroup(call.ctx, caller(call), call.params);
    return {};
  },

  'deactivate-user-group': async (call) => {
    await doDeactivateUserGroup(call.ctx, caller(call), call.params);
    return {};
  },

  'update-user-group-members': async (call) => {
    await doUpdateUserGroupMembers(call.ctx, caller(call), call.params);
    return {};
  },

  'update-user-group-subgroups': async (call) => {
    await doUpdateUserGroupSubgroups(call.ctx, caller(call), call.params);
    return {};
  },
};
