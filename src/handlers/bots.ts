import { getBotApiKey, getOwnBots } from '../access/bots';
import { doAddBot, doDeactivateBot, doRegenerateBotApiKey, doUpdateBot } from '../actions/bots';
import { caller, HandlerTable } from '../http/handler';
import { integrationNamed } from '../integrations';

export const botHandlers: HandlerTable = {
  'get-bots': async (call) => getOwnBots(call.ctx.db, caller(call).user),

  'add-bot': async (call) => doAddBot(call.ctx, caller(call), call.params, call.files, (name) => integrationNamed(name) !== undefined),

  'update-bot': async (call) => doUpdateBot(call.ctx, caller(call), call.params, call.files),

  'deactivate-bot': async (call) => {
    await doDeactivateBot(call.ctx, caller(call), call.params.bot_id);
    return {};
  },

  'get-bot-api-key': async (call) => getBotApiKey(call.ctx.db, caller(call).user, call.params.bot_id),

  'regenerate-bot-api-key': async (call) => doRegenerateBotApiKey(call.ctx, caller(call), call.params.bot_id),
};
