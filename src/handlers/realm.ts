import { doUpdateRealmUserDefaults } from '../actions/realm-defaults';
import { caller, HandlerTable } from '../http/handler';

export const realmHandlers: HandlerTable = {
  'update-realm-user-settings-defaults': async (call) => {
    const params = call.params as Record<string, unknown>;
    const sent = Object.fromEntries([...call.sent].filter((k) => k in params).map((k) => [k, params[k]]));
    await doUpdateRealmUserDefaults(call.ctx, caller(call), sent);
    return {};
  },
};
