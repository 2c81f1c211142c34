import { getIsUserGroupMember, getUserGroups } from '../access/user-groups';
import { caller, HandlerTable } from '../http/handler';

export const userGroupHandlers: HandlerTable = {
  'get-user-groups': async (call) =>
    (await getUserGroups(call.ctx.db, caller(call), call.params.include_deactivated_groups ?? false)) as never,

  'get-is-user-group-member': async (call) => {
    const { user_group_id, user_id, direct_member_only } = call.params;
    return getIsUserGroupMember(call.ctx.db, caller(call), user_group_id, user_id, direct_member_only ?? false);
  },
};
