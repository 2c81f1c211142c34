import { getIsUserGroupMember, getUserGroups } from '../access/user-groups';
import { caller, HandlerTable } from '../http/handler';

export const userGroupHandlers: HandlerTable = {
  'get-user-groups': async (call) => getUserGroups(call.ctx.db, caller(call).user, call.params),

  'get-is-user-group-member': async (call) => getIsUserGroupMember(call.ctx.db, caller(call).user, call.params),
};
