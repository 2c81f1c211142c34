import { getReadReceipts } from '../access/read-receipts';
import { doUpdateMutedTopic, doUpdateUserTopic } from '../actions/user-topics';
import { caller, HandlerTable } from '../http/handler';

export const userTopicHandlers: HandlerTable = {
  'update-user-topic': async (call) => doUpdateUserTopic(call.ctx, caller(call), call.params),
  'mute-topic': async (call) => doUpdateMutedTopic(call.ctx, caller(call), call.params),
  'get-read-receipts': async (call) => getReadReceipts(call.ctx.db, caller(call), call.params.message_id),
};
