import { doDeactivateCustomEmoji, doUploadCustomEmoji, listCustomEmoji } from '../actions/custom-emoji';
import { caller, type HandlerTable } from '../http/handler';

export const customEmojiHandlers: HandlerTable = {
  'get-custom-emoji': async (call) => listCustomEmoji(call.ctx, caller(call).user),
  'upload-custom-emoji': async (call) => doUploadCustomEmoji(call.ctx, caller(call), call.params.emoji_name, call.files),
  'deactivate-custom-emoji': async (call) => doDeactivateCustomEmoji(call.ctx, caller(call).user, call.params.emoji_name),
};
