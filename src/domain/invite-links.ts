import type { InviteRow } from '../queries/invites';
import { realmUrl } from './realm-address';

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

/** A reusable link's address: its /join/<key>/ sign-up page (src/http/signup-pages.ts). */
export const inviteLinkUrl = (externalUrl: string, stringId: string, key: string) => `${realmUrl(externalUrl, stringId)}/join/${key}/`;

/** An email invitation's address: its /accounts/do_confirm/<key> sign-up page, the shape of Zulip's confirmation links. */
export const emailInviteUrl = (externalUrl: string, stringId: string, key: string) =>
  `${realmUrl(externalUrl, stringId)}/accounts/do_confirm/${key}`;
