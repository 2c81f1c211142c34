import { doDeleteAttachment, getAttachments } from '../actions/attachments';
import { caller, HandlerTable } from '../http/handler';

export const attachmentHandlers: HandlerTable = {
  'get-attachments': async (call) => getAttachments(call.ctx, caller(call)),
  'remove-attachment': async (call) => doDeleteAttachment(call.ctx, caller(call), call.params),
};
