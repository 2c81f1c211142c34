import { getAvatarRedirect } from '../access/avatars';
import { doDeleteAvatar, doUploadAvatar } from '../actions/avatars';
import { caller, RESPONDED, type Call, type HandlerTable } from '../http/handler';

export const avatarHandlers: HandlerTable = {
  'upload-avatar': async (call) => doUploadAvatar(call.ctx, caller(call).user, caller(call).realm, call.files),

  'delete-avatar': async (call) => doDeleteAvatar(call.ctx, caller(call).user),

  'get-avatar': async (call) => redirectToAvatar(call, call.params.user_id_or_email, call.params.medium !== undefined),

  'get-avatar-medium': async (call) => redirectToAvatar(call, call.params.user_id_or_email, true),
};

/**
 * A 302 to the avatar, the request's query string kept on the target as the
 * client sent it (req.url: the pipeline rewrites originalUrl for the validator
 * and drops what the operation does not declare, such as a size hint).
 */
async function redirectToAvatar(
  call: Call<'get-avatar' | 'get-avatar-medium'>,
  userIdOrEmail: string,
  medium: boolean,
): Promise<typeof RESPONDED> {
  const url = call.req.url;
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const viewer = caller(call);
  call.res.redirect(302, await getAvatarRedirect(call.ctx, viewer, userIdOrEmail, medium, query));
  return RESPONDED;
}
