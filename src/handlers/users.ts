import { doCreateUser } from '../actions/users';
import { caller, HandlerTable } from '../http/handler';
import { getOwnUser } from '../access/users';

export const userHandlers: HandlerTable = {
  'get-own-user': async (call) => getOwnUser(call.ctx, caller(call)) as never,

  'create-user': async (call) => {
    const { email, password, full_name } = call.params;
    const user = await doCreateUser(call.ctx, caller(call), { email, password, full_name });
    return { user_id: user.id };
  },
};
