import { getAvatarRedirect } from '../access/avatars';
import { loadViewer } from '../access/viewer';
import { doDeleteAvatar, doUploadAvatar } from '../actions/avatars';
import { caller, RESPONDED, type HandlerTable } from '../http/handler';

export const avatarHandlers: HandlerTable = {
  'upload-avatar': async (call) => doUploadAvatar(call.ctx, caller(call), call.files),

  'delete-avatar': async (call) => doDeleteAvatar(call.ctx, caller(call)),

  'get-avatar': async (call) => {
    const url = call.req.originalUrl;
    const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
    const viewer = await loadViewer(call.ctx.db, caller(call));
    const target = await getAvatarRedirect(call.ctx, viewer, call.params.user_id_or_email, call.params.medium !== undefined, query);
    call.res.redirect(302, target);
    return RESPONDED;
  },
};
