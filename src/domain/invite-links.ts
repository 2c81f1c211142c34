import type { InviteRow } from '../queries/invites';

/**
 * Whether a reusable invitation link can still be used: not revoked, not
 * expired, not used up. Accepting it (POST /invites/multiuse/{key}/accept)
 * and the /join/{key}/ page ask the same question.
 */
export function isInviteLinkUsable(
  invite: Pick<InviteRow, 'revoked' | 'expires_at' | 'max_uses' | 'use_count'>,
  nowSeconds: number,
): boolean {
  if (invite.revoked) return false;
  if (invite.expires_at !== null && invite.expires_at <= nowSeconds) return false;
  return invite.max_uses === null || invite.use_count < invite.max_uses;
}
