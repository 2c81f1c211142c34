import { getInvitesControlledBy } from '../access/invites';
import { doResendEmailInvite, doRevokeEmailInvite, doRevokeInviteLink, doSendInvites } from '../actions/invites';
import { caller, HandlerTable } from '../http/handler';

export const inviteHandlers: HandlerTable = {
  'get-invites': async (call) => ({ invites: await getInvitesControlledBy(call.ctx.db, call.ctx.config, caller(call).user) }),

  'send-invites': async (call) => {
    await doSendInvites(call.ctx, caller(call), call.params, call.sent);
    return {};
  },

  'revoke-email-invite': async (call) => {
    await doRevokeEmailInvite(call.ctx, caller(call).user, call.params.invite_id);
    return {};
  },

  'resend-email-invite': async (call) => {
    await doResendEmailInvite(call.ctx, caller(call).user, call.params.invite_id);
    return {};
  },

  'revoke-invite-link': async (call) => {
    await doRevokeInviteLink(call.ctx, caller(call).user, call.params.invite_id);
    return {};
  },
};
