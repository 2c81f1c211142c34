import { doRemoveBotStorage, doUpdateBotStorage, getBotStorage } from '../actions/bot-storage';
import { caller, HandlerTable } from '../http/handler';

export const botStorageHandlers: HandlerTable = {
  'get-bot-storage': async (call) => ({ storage: await getBotStorage(call.ctx, caller(call).user, call.params.keys) }),

  'update-bot-storage': async (call) => {
    await doUpdateBotStorage(call.ctx, caller(call).user, call.params.storage);
    return {};
  },

  'remove-bot-storage': async (call) => {
    await doRemoveBotStorage(call.ctx, caller(call).user, call.params.keys);
    return {};
  },
};
