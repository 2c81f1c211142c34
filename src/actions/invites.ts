import type { Params } from '../contract';
import type { AppContext } from '../context';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import {
  DAILY_LIMIT_MESSAGE,
  DAY_SECONDS,
  INVITES_DEFAULT_REALM_DAILY_MAX,
  INVITES_MIN_USER_AGE_DAYS,
  INVITES_NEW_REALM_DAYS,
  INVITES_NEW_REALM_LIMIT_DAYS,
  inviteeEmailProblem,
  isEmailInviteUsable,
  parseInviteeEmails,
  realmMaxInvites,
  signupEmailProblem,
} from '../domain/invitations';
import { emailInviteUrl, inviteLinkUrl, isInviteLinkUsable } from '../domain/invite-links';
import { realmUrl } from '../domain/realm-address';
import { isAdminRole, isGuestRole, isModeratorOrAbove, isOwnerRole, Role } from '../domain/roles';
import { randomInviteKey } from '../domain/secrets';
import { checkNewAccount, emailKey } from '../domain/users';
import { invitationEmail } from '../emails/invitation';
import { invitationReminderEmail } from '../emails/invitation-reminder';
import { adminRequired, ApiError, ownerRequired } from '../errors';
import { checkMemberOrAdmin } from '../access/bots';
import { inGroup, isAdminViewer, loadCaller, type Caller } from '../access/viewer';
import { getChannelById } from '../queries/channels';
import { insertAuditLog } from '../queries/audit';
import {
  countInvitationsSent,
  getEmailInviteById,
  getEmailInviteByKey,
  getEmailInviteChannelIds,
  getEmailInviteGroupIds,
  insertEmailInvite,
  InviteStatus,
  listNewRealmIdsWithDefaultLimit,
  recordInvitationsSent,
  revokeOtherEmailInvites,
  claimEmailInvite,
  setEmailInviteStatus,
  type EmailInviteRow,
} from '../queries/email-invites';
import { addGroupMembers, getGroupMembershipSettings, getGroupsByIds } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import {
  addInviteUse,
  getInviteByKey,
  getInviteChannelIds,
  getInviteGroupIds,
  getInviteLinkById,
  insertInvite,
  insertInviteTargets,
  listRealmDefaultChannelIds,
  revokeInviteLink,
  type InviteRow,
} from '../queries/invites';
import { listRealmDomains } from '../queries/realm-domains';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserByEmailKey, getUserById } from '../queries/users';
import { queueSubscribed } from './channel-events';
import { subscribeInTx } from './channels';
import { queueEmail, withdrawPendingEmails } from './email-queue';
import { queueInvitesChanged } from './invite-events';
import { sendMessageInTx } from './messages';
import { INTERNAL, notificationBot } from './notifications';
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
 * The channels and groups an invitation (by email or link) gives, checked
 * as Zulip checks them for both: each channel must exist and be one the
 * caller can see ("Invalid channel ID ..."), and be a default channel or
 * one the caller may add subscribers to; each group a named, active,
 * non-system group the caller may add members to.
 */
async function checkInviteTargets(
  ctx: AppContext,
  viewer: Caller,
  streamIds: readonly number[],
  groupIdsIn: readonly number[],
): Promise<{ channelIds: number[]; groupIds: number[] }> {
  const user = viewer.user;
  const realm = viewer.realm;
  const channelIds = [...new Set(streamIds)];
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
  const groupIds = [...new Set(groupIdsIn)];
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
  return { channelIds, groupIds };
}

/** Only administrators choose a custom welcome message (feature level 416). */
function checkWelcomeMessage(user: UserRow, text: string | null | undefined): void {
  if (text == null) return;
  if (!isAdminRole(user.role)) throw adminRequired();
  if ([...text].length > MAX_WELCOME_MESSAGE_LENGTH) {
    throw new ApiError(`welcome_message_custom_text is too long (limit: ${MAX_WELCOME_MESSAGE_LENGTH} characters)`);
  }
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
  checkWelcomeMessage(user, p.welcome_message_custom_text);
  const { channelIds, groupIds } = await checkInviteTargets(ctx, viewer, p.stream_ids ?? [], p.group_ids ?? []);
  const minutes = sent.has('invite_expires_in_minutes') ? (p.invite_expires_in_minutes ?? null) : DEFAULT_INVITE_VALIDITY_MINUTES;
  const key = randomInviteKey();
  await inTransaction(ctx.db, async (tx) => {
    const { trx } = tx;
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
    await queueInvitesChanged(tx, ctx.bus, user.realm_id, [user.id]);
  });
  return inviteLinkUrl(ctx.config.externalUrl, realm.string_id, key);
}

/** The answer to every unusable link, so links cannot be probed. */
export const expired = () => new ApiError('The invitation link has expired or is not valid.', 'INVALID_INVITATION');

/** The invitation an account is made from: a reusable link (multiuse_invites) or an email invitation (email_invites). */
type Invitation = Pick<InviteRow | EmailInviteRow, 'id' | 'realm_id' | 'invited_as' | 'include_realm_default_subscriptions'>;

/**
 * The one way an account is made from an invitation (a reusable link over
 * the API or its sign-up page, an email invitation's sign-up page): the
 * organization's domain rule, the account with the invited role, the
 * invited channels (and the organization's default channels when the
 * invitation says so) and groups. The organization's other email
 * invitations to the same address are revoked, as Zulip's
 * revoke_preregistration_users does, and their senders told.
 */
async function createInvitedUserInTx(
  ctx: AppContext,
  tx: Tx,
  kind: 'link' | 'email',
  invite: Invitation,
  account: { email: string; fullName: string; password: string },
): Promise<UserRow> {
  const realm = await getRealmById(tx.trx, invite.realm_id);
  if (!realm || realm.deactivated) throw expired();
  const { email } = account;
  // The organization's domains, "+" addresses and disposable-mail domains (Zulip's email_allowed_for_realm).
  const problem = signupEmailProblem(email, realm, await listRealmDomains(tx.trx, realm.id));
  if (problem !== null) throw new ApiError(problem);
  // Nobody acts for the person signing up (as in Zulip's audit log); the user-created row names the invitation.
  const user = await createUserInTx(tx, ctx.bus, {
    realmId: realm.id,
    email,
    fullName: account.fullName,
    role: invite.invited_as,
    password: account.password,
    invitation: kind === 'link' ? { multiuseInviteId: invite.id } : { emailInviteId: invite.id },
  });
  const channelIds = kind === 'link' ? await getInviteChannelIds(tx.trx, invite.id) : await getEmailInviteChannelIds(tx.trx, invite.id);
  const groupIds = kind === 'link' ? await getInviteGroupIds(tx.trx, invite.id) : await getEmailInviteGroupIds(tx.trx, invite.id);
  const defaults = invite.include_realm_default_subscriptions ? await listRealmDefaultChannelIds(tx.trx, realm.id) : [];
  for (const id of [...new Set([...channelIds, ...defaults])]) {
    const channel = await getChannelById(tx.trx, realm.id, id);
    if (channel && !channel.deactivated) {
      const by = { realmId: realm.id, actorId: null, channelId: channel.id };
      await queueSubscribed(tx, ctx.bus, realm.id, channel.id, await subscribeInTx(tx, channel.recipient_id, [user.id], undefined, by));
    }
  }
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
  const keep = kind === 'email' ? invite.id : null;
  const revokedFor = await revokeOtherEmailInvites(tx.trx, realm.id, emailKey(email), keep);
  // Whoever has joined needs no reminder (Zulip's clear_scheduled_invitation_emails).
  await withdrawPendingEmails(tx, invitationReminderEmail, email);
  if (revokedFor.length) await queueInvitesChanged(tx, ctx.bus, realm.id, revokedFor);
  return user;
}

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
    if (!invite || !isInviteLinkUsable(invite, nowSeconds())) throw expired();
    const user = await createInvitedUserInTx(ctx, tx, 'link', invite, { email, fullName, password: p.password });
    await addInviteUse(tx.trx, invite.id);
    return user;
  });
}

/**
 * Accepting an email invitation on its sign-up page: the account gets the
 * invited address, the name and password chosen on the page, and what the
 * invitation gives; the invitation is used. The sender is told by
 * Notification Bot when the invitation says so (Zulip's
 * notify_referrer_on_join), and gets `invites_changed` with the
 * administrators.
 */
export async function doAcceptEmailInvite(ctx: AppContext, key: string, p: { fullName: string; password: string }): Promise<UserRow> {
  return inTransaction(ctx.db, async (tx) => {
    const invite = await getEmailInviteByKey(tx.trx, key);
    if (!invite || !isEmailInviteUsable(invite, nowSeconds())) throw expired();
    const { email, fullName } = checkNewAccount({ email: invite.email, fullName: p.fullName, password: p.password }, 'Invalid address.');
    // An address confirmed for a reusable link: the link must still be usable, and this is one of its uses.
    if (invite.multiuse_invite_id !== null) {
      const link = await getInviteLinkById(tx.trx, invite.multiuse_invite_id);
      if (!link || !isInviteLinkUsable(link, nowSeconds())) throw expired();
      await addInviteUse(tx.trx, link.id);
    }
    // Taken before the account is made: of two sign-ups (or a sign-up and a revocation) at once, one wins.
    if (!(await claimEmailInvite(tx.trx, invite.id))) throw expired();
    const user = await createInvitedUserInTx(ctx, tx, 'email', invite, { email, fullName, password: p.password });
    await setEmailInviteStatus(tx.trx, invite.id, InviteStatus.USED, user.id);
    const referrer = await getUserById(tx.trx, invite.referred_by_id);
    if (referrer && referrer.is_active && invite.notify_referrer_on_join) {
      const realm = (await getRealmById(tx.trx, invite.realm_id))!;
      const bot = await notificationBot(tx, realm.id);
      // Zulip's wording, with a silent mention of the new user.
      const content = `@_**${user.full_name}|${user.id}** accepted your invitation to join Zulip!`;
      await sendMessageInTx(
        tx,
        ctx.bus,
        await loadCaller(tx.trx, bot, realm),
        { kind: 'direct', recipients: [referrer] },
        content,
        INTERNAL,
      );
    }
    await queueInvitesChanged(tx, ctx.bus, invite.realm_id, [invite.referred_by_id]);
    return user;
  });
}

/** An invitation's failure in Zulip's shape (InvitationError): code INVITATION_FAILED and its four fields. */
function invitationFailed(
  msg: string,
  errors: Array<[string, string, boolean]>,
  sentInvitations: boolean,
  dailyLimitReached = false,
): ApiError<'INVITATION_FAILED'> {
  return new ApiError(msg, 'INVITATION_FAILED', 400, {
    errors,
    sent_invitations: sentInvitations,
    license_limit_reached: false,
    daily_limit_reached: dailyLimitReached,
  });
}

/**
 * Zulip's check_invite_limit (domain/invitations.ts says the rules): refuses
 * `count` more invitation mails when the organization, or all new
 * organizations together, would pass their daily limit.
 */
async function checkInviteLimit(q: Tx['trx'], realm: RealmRow, count: number, now: number): Promise<void> {
  const refuse = () => invitationFailed(DAILY_LIMIT_MESSAGE, [], false, true);
  const recent = await countInvitationsSent(q, [realm.id], now - DAY_SECONDS);
  if (count + recent > realmMaxInvites(realm)) throw refuse();
  const newRealmAge = INVITES_NEW_REALM_DAYS * DAY_SECONDS;
  if (realm.date_created <= now - newRealmAge) return;
  // An organization whose limit was raised is exempt from the new organizations' shared limit.
  if (realmMaxInvites(realm) > INVITES_DEFAULT_REALM_DAILY_MAX) return;
  const newRealms = await listNewRealmIdsWithDefaultLimit(q, now - newRealmAge, INVITES_DEFAULT_REALM_DAILY_MAX);
  for (const [days, limit] of INVITES_NEW_REALM_LIMIT_DAYS) {
    if (count + (await countInvitationsSent(q, newRealms, now - days * DAY_SECONDS)) > limit) throw refuse();
  }
}

/** Zulip reminds of an invitation two days before it expires, if it was made for four days or more. */
const REMINDER_BEFORE_EXPIRY_SECONDS = 2 * DAY_SECONDS;
const REMINDER_MIN_VALIDITY_SECONDS = 4 * DAY_SECONDS;

/**
 * Queues an email invitation's mail (first send and resend alike) and counts
 * it for the daily limit; with it, as Zulip's do_send_user_invite_email,
 * the reminder two days before the link expires (for links valid four days
 * or more), replacing any reminder still waiting for that address.
 */
async function queueInvitationMail(ctx: AppContext, tx: Tx, realm: RealmRow, referrer: UserRow, invite: EmailInviteRow, now: number) {
  const mail = {
    data: {
      referrerName: referrer.full_name,
      referrerEmail: referrer.delivery_email,
      realmName: realm.name,
      realmUrl: realmUrl(ctx.config.externalUrl, realm.string_id),
      link: emailInviteUrl(ctx.config.externalUrl, realm.string_id, invite.confirmation_key),
      expiresAt: invite.expires_at === null ? null : formatUtc(invite.expires_at),
    },
    to: invite.email,
    // The invited person has no settings yet: the organization's language (Zulip's realm.default_language).
    language: realm.default_language,
    realmId: realm.id,
    fromName: realm.name,
  };
  await queueEmail(ctx, tx, { template: invitationEmail, ...mail });
  await recordInvitationsSent(tx.trx, realm.id, 1, now);
  await withdrawPendingEmails(tx, invitationReminderEmail, invite.email);
  // Zulip counts the validity left from now (a resend's too); a link that never expires gets no reminder.
  if (invite.expires_at !== null && invite.expires_at - now >= REMINDER_MIN_VALIDITY_SECONDS) {
    await queueEmail(ctx, tx, {
      template: invitationReminderEmail,
      ...mail,
      notBeforeMs: (invite.expires_at - REMINDER_BEFORE_EXPIRY_SECONDS) * 1000,
    });
  }
}

/** "2026-12-10 14:22 UTC": unambiguous wherever the mail is read. */
function formatUtc(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * Zulip's check_role_based_permissions: only owners invite owners; inviting
 * administrators or moderators needs an administrator (a plain 400 there,
 * not UNAUTHORIZED_PRINCIPAL, as in Zulip).
 */
function checkRoleBasedPermissions(user: UserRow, invitedAs: number, requireAdmin: boolean): void {
  if (invitedAs === Role.OWNER && !isOwnerRole(user.role)) throw ownerRequired();
  if (requireAdmin && !isAdminRole(user.role)) throw new ApiError('Must be an organization administrator');
}

/**
 * POST /invites: an email invitation per address, in Zulip's order of
 * checks (invite_users_backend, then do_invite_users): permission, role,
 * addresses, channels and groups, the daily limit, the age of the
 * caller's account, each address's validity (any invalid one: nobody is
 * invited), existing accounts (skipped; if all are, nobody is invited).
 * Invitations are made and their mail queued in one transaction; skipped
 * addresses are then reported with `sent_invitations: true`.
 */
export async function doSendInvites(ctx: AppContext, viewer: Caller, p: Params<'send-invites'>, sent: ReadonlySet<string>): Promise<void> {
  const user = viewer.user;
  checkMemberOrAdmin(user);
  if (!inGroup(viewer, viewer.realm.can_invite_users_group)) throw new ApiError('Insufficient permission');
  const role = p.invite_as ?? Role.MEMBER;
  checkRoleBasedPermissions(user, role, role === Role.OWNER || role === Role.ADMINISTRATOR || role === Role.MODERATOR);
  checkWelcomeMessage(user, p.welcome_message_custom_text);
  if (!p.invitee_emails) throw new ApiError('You must specify at least one email address.');
  const emails = parseInviteeEmails(p.invitee_emails);
  const { channelIds, groupIds } = await checkInviteTargets(ctx, viewer, p.stream_ids, p.group_ids ?? []);
  const minutes = sent.has('invite_expires_in_minutes') ? (p.invite_expires_in_minutes ?? null) : DEFAULT_INVITE_VALIDITY_MINUTES;
  const skipped = await inTransaction(ctx.db, async (tx) => {
    const { trx } = tx;
    const now = nowSeconds();
    const realm = (await getRealmById(trx, user.realm_id))!;
    await checkInviteLimit(trx, realm, emails.length, now);
    // An organization anyone may join is not a way to send spam invitations from a new account.
    if (!realm.invite_required && !isAdminRole(user.role) && user.date_joined > now - INVITES_MIN_USER_AGE_DAYS * DAY_SECONDS) {
      throw invitationFailed(
        'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.',
        [],
        false,
      );
    }
    const domains = realm.emails_restricted_to_domains ? await listRealmDomains(trx, realm.id) : [];
    const errors: Array<[string, string, boolean]> = [];
    const valid: string[] = [];
    for (const email of emails) {
      const problem = inviteeEmailProblem(email, realm, domains);
      if (problem) errors.push([email, problem, false]);
      else valid.push(email);
    }
    const taken: Array<[string, string, boolean]> = [];
    const good: string[] = [];
    for (const email of valid) {
      const existing = await getUserByEmailKey(trx, realm.id, emailKey(email));
      if (!existing) good.push(email);
      else if (existing.is_active) taken.push([email, 'Already has an account.', false]);
      else taken.push([email, 'Account has been deactivated.', true]);
    }
    if (errors.length)
      throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", [...errors, ...taken], false);
    if (taken.length === emails.length) throw invitationFailed("We weren't able to invite anyone.", taken, false);
    for (const email of good) {
      const row = {
        realm_id: realm.id,
        referred_by_id: user.id,
        email,
        invited_as: role,
        invited_at: now,
        expires_at: minutes === null ? null : now + minutes * 60,
        notify_referrer_on_join: p.notify_referrer_on_join ?? true,
        include_realm_default_subscriptions: p.include_realm_default_subscriptions ?? false,
        welcome_message_custom_text: p.welcome_message_custom_text ?? null,
        confirmation_key: randomInviteKey(),
        multiuse_invite_id: null,
      };
      const id = await insertEmailInvite(trx, row, channelIds, groupIds);
      await queueInvitationMail(ctx, tx, realm, user, { ...row, id, status: InviteStatus.ACTIVE, created_user_id: null }, now);
    }
    await queueInvitesChanged(tx, ctx.bus, realm.id, [user.id]);
    return taken;
  });
  if (skipped.length) {
    throw invitationFailed(
      "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      skipped,
      true,
    );
  }
}

const noSuchInvitation = () => new ApiError('No such invitation');

/**
 * An email invitation the caller may revoke or resend (Zulip's
 * revoke_user_invite and resend_user_invite_email): its sender, or an
 * administrator (an owner for an invitation as owner). One not usable any
 * more (used, revoked, expired) is "No such invitation", as it is no
 * longer listed.
 */
async function accessEmailInvite(q: Tx['trx'], user: UserRow, inviteId: number): Promise<EmailInviteRow> {
  checkMemberOrAdmin(user);
  const invite = await getEmailInviteById(q, inviteId);
  if (!invite || invite.realm_id !== user.realm_id || !isEmailInviteUsable(invite, nowSeconds())) throw noSuchInvitation();
  if (invite.referred_by_id !== user.id) checkRoleBasedPermissions(user, invite.invited_as, true);
  return invite;
}

/** DELETE /invites/{invite_id}: the link stops working; the mail already sent stays sent. */
export async function doRevokeEmailInvite(ctx: AppContext, user: UserRow, inviteId: number): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const invite = await accessEmailInvite(tx.trx, user, inviteId);
    await setEmailInviteStatus(tx.trx, invite.id, InviteStatus.REVOKED);
    await withdrawPendingEmails(tx, invitationReminderEmail, invite.email);
    await queueInvitesChanged(tx, ctx.bus, invite.realm_id, [invite.referred_by_id]);
  });
}

/** POST /invites/{invite_id}/resend: the same link and expiry, mailed again; it counts towards the daily limit. */
export async function doResendEmailInvite(ctx: AppContext, user: UserRow, inviteId: number): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const invite = await accessEmailInvite(tx.trx, user, inviteId);
    const realm = (await getRealmById(tx.trx, invite.realm_id))!;
    const now = nowSeconds();
    await checkInviteLimit(tx.trx, realm, 1, now);
    const referrer = (await getUserById(tx.trx, invite.referred_by_id))!;
    await queueInvitationMail(ctx, tx, realm, referrer, invite, now);
  });
}

/**
 * DELETE /invites/multiuse/{invite_id} (Zulip's revoke_multiuse_invite):
 * the link's maker, or an administrator (an owner for a link inviting
 * owners); a revoked link says so.
 */
export async function doRevokeInviteLink(ctx: AppContext, user: UserRow, inviteId: number): Promise<void> {
  checkMemberOrAdmin(user);
  await inTransaction(ctx.db, async (tx) => {
    const invite = await getInviteLinkById(tx.trx, inviteId);
    if (!invite || invite.realm_id !== user.realm_id) throw noSuchInvitation();
    if (invite.referred_by_id !== user.id) checkRoleBasedPermissions(user, invite.invited_as, true);
    if (invite.revoked) throw new ApiError('Invitation has already been revoked');
    await revokeInviteLink(tx.trx, invite.id);
    await queueInvitesChanged(tx, ctx.bus, invite.realm_id, [invite.referred_by_id]);
  });
}
