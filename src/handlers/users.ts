import { getOwnUser, getUser, getUserByEmail, getUsers } from '../access/users';
import { doChangeAlertWords, getAlertWords } from '../actions/alert-words';
import { doUpdateSettings } from '../actions/settings';
import { doUpdateUser } from '../actions/update-user';
import { doUpdateUserByEmail } from '../actions/update-user-by-email';
import { doCreateUser, doDeactivateOwnUser, doDeactivateUser, doReactivateUser } from '../actions/users';
import { caller, HandlerTable } from '../http/handler';

export const userHandlers: HandlerTable = {
  'get-own-user': async (call) => getOwnUser(call.ctx, caller(call).user),

  'get-users': async (call) => getUsers(call.ctx, caller(call), call.params),

  'get-user': async (call) => getUser(call.ctx, caller(call), call.params),

  'create-user': async (call) => {
    const user = await doCreateUser(call.ctx, caller(call).user, call.params);
    return { user_id: user.id };
  },

  'update-user': async (call) => {
    await doUpdateUser(call.ctx, caller(call).user, caller(call).realm, call.params);
    return {};
  },

  'get-user-by-email': async (call) => getUserByEmail(call.ctx, caller(call), call.params),

  'update-user-by-email': async (call) => {
    await doUpdateUserByEmail(call.ctx, caller(call), call.params);
    return {};
  },

  'deactivate-own-user': async (call) => {
    await doDeactivateOwnUser(call.ctx, caller(call).user);
    return {};
  },

  'deactivate-user': async (call) => {
    await doDeactivateUser(call.ctx, call.params.user_id, caller(call).user);
    return {};
  },

  'reactivate-user': async (call) => {
    await doReactivateUser(call.ctx, caller(call), call.params.user_id);
    return {};
  },

  'update-settings': async (call) => {
    await doUpdateSettings(call.ctx, caller(call).user, call.params, call.sessionId);
    // A new password ended the user's other sessions; the one that set it goes on under a new
    // key, so a copy of the old cookie taken before the change is worth nothing.
    if (call.params.new_password !== undefined) await call.renewSession();
    return {};
  },

  'get-alert-words': async (call) => ({ alert_words: await getAlertWords(call.ctx, caller(call).user) }),

  'add-alert-words': async (call) => ({
    alert_words: await doChangeAlertWords(call.ctx, caller(call).user, 'add', call.params.alert_words),
  }),

  'remove-alert-words': async (call) => ({
    alert_words: await doChangeAlertWords(call.ctx, caller(call).user, 'remove', call.params.alert_words),
  }),
};
