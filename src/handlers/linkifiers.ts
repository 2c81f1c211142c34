import { doAddLinkifier, doRemoveLinkifier, doReorderLinkifiers, doUpdateLinkifier, getLinkifiers } from '../actions/linkifiers';
import { doAddPlayground, doRemovePlayground } from '../actions/playgrounds';
import { caller, type HandlerTable } from '../http/handler';

export const linkifierHandlers: HandlerTable = {
  'get-linkifiers': async (call) => getLinkifiers(call.ctx, caller(call)),
  'add-linkifier': async (call) => doAddLinkifier(call.ctx, caller(call), call.params),
  'update-linkifier': async (call) => doUpdateLinkifier(call.ctx, caller(call), call.params.filter_id, call.params),
  'remove-linkifier': async (call) => doRemoveLinkifier(call.ctx, caller(call), call.params.filter_id),
  'reorder-linkifiers': async (call) => doReorderLinkifiers(call.ctx, caller(call), call.params.ordered_linkifier_ids),
  'add-code-playground': async (call) => doAddPlayground(call.ctx, caller(call), call.params),
  'remove-code-playground': async (call) => doRemovePlayground(call.ctx, caller(call), call.params.playground_id),
};
