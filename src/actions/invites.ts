import { emailDomainAllowed } from '../domain/realm-domains';
import { listRealmDomains } from '../queries/realm-domains';
import type { Params } from '../contract';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { isInviteLinkUsable } from '../domain/invite-links';
import { realmUrl } from '../domain/realm-address';
import { isAdminRole, isGuestRole, isModeratorOrAbove, isOwnerRole, Role } from '../domain/roles';
import { randomInviteKey } from '../domain/secrets';
import { checkNewAccount } from '../domain/users';
import { adminRequired, ApiError, ownerRequired } from '../errors';
import { inGroup, isAdminViewer, type Caller } from '../access/viewer';
import { getChannelById } from '../queries/channels';
import { insertAuditLog } from '../queries/audit';
import { addGroupMembers, getGroupMembershipSettings, getGroupsByIds } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import {
  addInviteUse,
  getInviteByKey,
  getInviteChannelIds,
  getInviteGroupIds,
  insertInvite,
  insertInviteTargets,
  listRealmDefaultChannelIds,
} from '../queries/invites';
import { getRealmById } from '../queries/realms';
import type { UserRow } from '../queries/rows';
import { queueSubscribed } from './channel-events';
import { subscribeInTx } from './channels';
import { createUserInTx } from './users';

/** Zulip's INVITATION_LINK_VALIDITY_MINUTES default: ten days. */
export const DEFAULT_INVITE_VALIDITY_MINUTES = 14400;
export const MAX_WELCOME_MESSAGE_LENGTH = 8000;

/** Invitations may only grant a role as restricted as the caller's own, or more. */
function checkCanInviteAs(user: UserRow, role: number): void {
  if (role === Role.OWNER && !isOwnerRole(user.role)) throw ownerRequired();
  if (role === Role.ADMINISTRATOR && !isAdminRole(user.role)) throw adminRequired();
  if (role === Role.MODERATOR && !isModeratorOrAbove(user.role)) throw new ApiError('Insufficient permission');
}

/**
 * POST /invites/multiuse: a reusable link for the organization's
 * create_multiuse_invite_group, with the role, channels and groups new
 * users get. Channels must be default channels or ones the caller may add
 * subscribers to; groups ones the caller may add members to.
 */
export async function doCreateMultiuseInvite(
  ctx: AppContext,
  viewer: Caller,
  p: Params<'create-invite-link'>,
  sent: ReadonlySet<string>,
): Promise<string> {
  const user = viewer.user;
  const realm = viewer.realm;
  if (isGuestRole(user.role) || !inGroup(viewer, realm.create_multiuse_invite_group)) throw new ApiError('Insufficient permission');
  const role = p.invite_as ?? Role.MEMBER;
  checkCanInviteAs(user, role);
  if (p.welcome_message_custom_text != null) {
    if (!isAdminRole(user.role)) throw adminRequired();
    if ([...p.welcome_message_custom_text].length > MAX_WELCOME_MESSAGE_LENGTH) {
      throw new ApiError(`welcome_message_custom_text is too long (limit: ${MAX_WELCOME_MESSAGE_LENGTH} characters)`);
    }
  }
  const channelIds = [...new Set(p.stream_ids ?? [])];
  for (const id of channelIds) {
    const channel = await getChannelById(ctx.db, user.realm_id, id);
    if (
      !channel ||
      channel.deactivated ||
      (channel.invite_only && !viewer.subscribedRecipients.has(channel.recipient_id) && !isAdminRole(user.role))
    ) {
      throw new ApiError(`Invalid channel ID ${id}. No invites were sent.`);
    }
    const canAdd =
      isAdminViewer(viewer) ||
      inGroup(viewer, realm.can_add_subscribers_group) ||
      inGroup(viewer, channel.can_add_subscribers_group) ||
      inGroup(viewer, channel.can_administer_channel_group);
    if (!channel.is_default && !canAdd) throw new ApiError('You do not have permission to subscribe other users to channels.');
  }
  const groupIds = [...new Set(p.group_ids ?? [])];
  const groups = await getGroupsByIds(ctx.db, user.realm_id, groupIds);
  for (const id of groupIds) {
    const g = groups.get(id);
    if (!g || g.name === null || g.is_system_group || g.deactivated) throw new ApiError('Invalid user group');
    const settings = await getGroupMembershipSettings(ctx.db, id);
    const canAdd =
      isAdminViewer(viewer) ||
      inGroup(viewer, realm.can_manage_all_groups) ||
      inGroup(viewer, settings?.can_add_members_group) ||
      inGroup(viewer, settings?.can_manage_group);
    if (!canAdd) throw new ApiError('Insufficient permission');
  }
  const minutes = sent.has('invite_expires_in_minutes') ? (p.invite_expires_in_minutes ?? null) : DEFAULT_INVITE_VALIDITY_MINUTES;
  const key = randomInviteKey();
  await inTransaction(ctx.db, async ({ trx }) => {
    const now = nowSeconds();
    const expiresAt = minutes === null ? null : now + minutes * 60;
    const inviteId = await insertInvite(trx, {
      realm_id: user.realm_id,
      referred_by_id: user.id,
      link_key: key,
      invited_as: role,
      date_created: now,
      expires_at: expiresAt,
      include_realm_default_subscriptions: p.include_realm_default_subscriptions ?? false,
      welcome_message_custom_text: isAdminRole(user.role) ? (p.welcome_message_custom_text ?? null) : null,
    });
    await insertInviteTargets(trx, inviteId, channelIds, groupIds);
    await insertAuditLog(trx, {
      realmId: user.realm_id,
      actorId: user.id,
      eventType: AuditEventType.MULTIUSE_INVITE_CREATED,
      extra: { multiuse_invite_id: inviteId, invited_as: role, channel_ids: channelIds, group_ids: groupIds, expires_at: expiresAt },
    });
  });
  return `${realmUrl(ctx.config.externalUrl, realm.string_id)}/join/${key}/`;
}

/** The answer to every unusable link, so links cannot be probed. */
const expired = () => new ApiError('The invitation link has expired or is not valid.', 'INVALID_INVITATION');

/**
 * Accepting a link: creates the account with the link's role, the link's
 * channels (and the organization's default channels when the link says so)
 * and groups, counts the use, and returns the new user.
 */
export async function doAcceptMultiuseInvite(
  ctx: AppContext,
  key: string,
  p: Pick<Params<'accept-invite-link'>, 'email' | 'password' | 'full_name'>,
): Promise<UserRow> {
  const { email, fullName } = checkNewAccount(
    { email: p.email, fullName: p.full_name, password: p.password },
    'Enter a valid email address.',
  );
  return inTransaction(ctx.db, async (tx) => {
    const invite = await getInviteByKey(tx.trx, key);
    const now = nowSeconds();
    if (!invite || !isInviteLinkUsable(invite, now)) throw expired();
    const realm = await getRealmById(tx.trx, invite.realm_id);
    if (!realm || realm.deactivated) throw expired();
    // An organization restricted to its domains takes only their addresses (Zulip's email_allowed_for_realm).
    if (realm.emails_restricted_to_domains && !emailDomainAllowed(email, await listRealmDomains(tx.trx, realm.id))) {
      throw new ApiError(
        `Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`,
      );
    }
    // Nobody acts for the person signing up (as in Zulip's audit log); the user-created row names the link.
    const user = await createUserInTx(tx, ctx.bus, {
      realmId: realm.id,
      email,
      fullName,
      role: invite.invited_as,
      password: p.password,
      inviteId: invite.id,
    });
    const channelIds = await getInviteChannelIds(tx.trx, invite.id);
    const defaults = invite.include_realm_default_subscriptions ? await listRealmDefaultChannelIds(tx.trx, realm.id) : [];
    for (const id of [...new Set([...channelIds, ...defaults])]) {
      const channel = await getChannelById(tx.trx, realm.id, id);
      if (channel && !channel.deactivated) {
        const by = { realmId: realm.id, actorId: null, channelId: channel.id };
        await queueSubscribed(tx, ctx.bus, realm.id, channel.id, await subscribeInTx(tx, channel.recipient_id, [user.id], undefined, by));
      }
    }
    const groupIds = await getInviteGroupIds(tx.trx, invite.id);
    for (const groupId of groupIds) await addGroupMembers(tx.trx, groupId, [user.id]);
    await insertAuditLog(
      tx.trx,
      groupIds.map((groupId) => ({
        realmId: realm.id,
        actorId: null,
        userId: user.id,
        groupId,
        eventType: AuditEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED,
      })),
    );
    await addInviteUse(tx.trx, invite.id);
    return user;
  });
}
