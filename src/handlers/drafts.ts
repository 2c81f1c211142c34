import { doCreateDrafts, doDeleteDraft, doEditDraft, getDrafts } from '../actions/drafts';
import { caller, HandlerTable } from '../http/handler';

export const draftHandlers: HandlerTable = {
  'get-drafts': async (call) => getDrafts(call.ctx, caller(call)),
  'create-drafts': async (call) => doCreateDrafts(call.ctx, caller(call), call.params),
  'edit-draft': async (call) => doEditDraft(call.ctx, caller(call), call.params),
  'delete-draft': async (call) => doDeleteDraft(call.ctx, caller(call), call.params),
};
