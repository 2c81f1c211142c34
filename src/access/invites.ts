import type { Knex } from 'knex';
import type { Schema } from '../contract';
import type { Config } from '../config';
import { isEmailInviteUsable } from '../domain/invitations';
import { inviteLinkUrl, isInviteLinkUsable } from '../domain/invite-links';
import { isAdminRole } from '../domain/roles';
import { checkMemberOrAdmin } from './bots';
import { getEmailInviteByKey, listUsableEmailInvites, type EmailInviteRow } from '../queries/email-invites';
import { nowSeconds } from '../queries/ids';
import { getInviteByKey, listUnrevokedInviteLinks, type InviteRow } from '../queries/invites';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';

type ListedInvite = Schema<'EmailInvite'> | Schema<'MultiuseInvite'>;

/**
 * GET /invites (Zulip's do_get_invites_controlled_by_user): the usable
 * email invitations, then the usable reusable links, that the caller
 * controls — every one in the organization for an administrator, their own
 * for anyone else. Guests and bots are refused (require_member_or_admin).
 */
export async function getInvitesControlledBy(db: Knex, config: Pick<Config, 'externalUrl'>, user: UserRow): Promise<ListedInvite[]> {
  checkMemberOrAdmin(user);
  const now = nowSeconds();
  const own = isAdminRole(user.role) ? null : user.id;
  const realm = (await getRealmById(db, user.realm_id))!;
  const emails = (await listUsableEmailInvites(db, user.realm_id, own, now)).map((i): ListedInvite => ({
    email: i.email,
    invited_by_user_id: i.referred_by_id,
    invited: i.invited_at,
    expiry_date: i.expires_at,
    id: i.id,
    invited_as: i.invited_as,
    is_multiuse: false,
    notify_referrer_on_join: i.notify_referrer_on_join,
  }));
  // Parley's links may also be used up (max_uses); those are left out like expired ones.
  const links = (await listUnrevokedInviteLinks(db, user.realm_id, own))
    .filter((l) => isInviteLinkUsable(l, now))
    .map((l): ListedInvite => ({
      invited_by_user_id: l.referred_by_id,
      invited: l.date_created,
      expiry_date: l.expires_at,
      id: l.id,
      link_url: inviteLinkUrl(config.externalUrl, realm.string_id, l.link_key),
      invited_as: l.invited_as,
      is_multiuse: true,
    }));
  return [...emails, ...links];
}

/** What a sign-up page found for its key. */
export type SignupInvitation =
  | { kind: 'email'; invite: EmailInviteRow; realm: RealmRow }
  | { kind: 'link'; invite: InviteRow; realm: RealmRow }
  /** The email invitation was used already: the page says to log in. */
  | { kind: 'used'; realm: RealmRow }
  /** Unknown, expired, revoked or used up, or its organization deactivated: one answer for all. */
  | { kind: 'unusable' };

/** The email invitation a /accounts/do_confirm/<key> page is for. */
export async function getEmailInviteForSignup(db: Knex, key: string): Promise<SignupInvitation> {
  const invite = await getEmailInviteByKey(db, key);
  const realm = invite ? await getRealmById(db, invite.realm_id) : undefined;
  if (!invite || !realm || realm.deactivated) return { kind: 'unusable' };
  if (invite.status === 1) return { kind: 'used', realm };
  return isEmailInviteUsable(invite, nowSeconds()) ? { kind: 'email', invite, realm } : { kind: 'unusable' };
}

/** The reusable link a /join/<key>/ page is for. */
export async function getInviteLinkForSignup(db: Knex, key: string): Promise<SignupInvitation> {
  const invite = await getInviteByKey(db, key);
  const realm = invite ? await getRealmById(db, invite.realm_id) : undefined;
  if (!invite || !realm || realm.deactivated || !isInviteLinkUsable(invite, nowSeconds())) return { kind: 'unusable' };
  return { kind: 'link', invite, realm };
}
