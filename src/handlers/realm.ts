import { doUpdateRealmUserDefaults } from '../actions/realm-defaults';
import { doUpdateRealm } from '../actions/realm-settings';
import { caller, HandlerTable } from '../http/handler';

export const realmHandlers: HandlerTable = {
  // The request schema has no defaults, so the parameters are exactly the settings sent.
  'update-realm-user-settings-defaults': async (call) => {
    await doUpdateRealmUserDefaults(call.ctx, caller(call).user, call.params);
    return {};
  },
  'update-realm': async (call) => doUpdateRealm(call.ctx, caller(call).user, call.params),
};
