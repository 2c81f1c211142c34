import { doUpdateRealmUserDefaults } from '../actions/realm-defaults';
import { caller, HandlerTable } from '../http/handler';

export const realmHandlers: HandlerTable = {
  // The request schema has no defaults, so the parameters are exactly the settings sent.
  'update-realm-user-settings-defaults': async (call) => {
    await doUpdateRealmUserDefaults(call.ctx, caller(call).user, call.params);
    return {};
  },
};
