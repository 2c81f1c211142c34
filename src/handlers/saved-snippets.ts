import { doCreateSavedSnippet, doDeleteSavedSnippet, doEditSavedSnippet, getSavedSnippets } from '../actions/saved-snippets';
import { caller, HandlerTable } from '../http/handler';

export const savedSnippetHandlers: HandlerTable = {
  'get-saved-snippets': async (call) => getSavedSnippets(call.ctx, caller(call).user),
  'create-saved-snippet': async (call) => doCreateSavedSnippet(call.ctx, caller(call).user, call.params),
  'edit-saved-snippet': async (call) => doEditSavedSnippet(call.ctx, caller(call).user, call.params),
  'delete-saved-snippet': async (call) => doDeleteSavedSnippet(call.ctx, caller(call).user, call.params),
};
