import { doMarkAllAsRead, doMarkChannelAsRead, doMarkTopicAsRead } from '../actions/mark-read';
import { caller, HandlerTable } from '../http/handler';

export const markReadHandlers: HandlerTable = {
  'mark-all-as-read': async (call) => doMarkAllAsRead(call.ctx, caller(call)),
  'mark-stream-as-read': async (call) => doMarkChannelAsRead(call.ctx, caller(call), call.params),
  'mark-topic-as-read': async (call) => doMarkTopicAsRead(call.ctx, caller(call), call.params),
};
