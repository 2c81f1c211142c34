import type { Knex } from 'knex';
import { deleteSessionsOfUsers } from '../queries/sessions';
import { accessUserForAdmin } from '../access/users';
import { inGroup, type Caller } from '../access/viewer';
import { checkBotCreationPolicy } from '../domain/bots';
import { isNameOfActiveUser } from '../queries/bots';
import type { Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { revokeInvitationsBy } from '../queries/email-invites';
import { queueInvitesChanged } from './invite-events';
import { withdrawPendingEmails } from './email-queue';
import { invitationReminderEmail } from '../emails/invitation-reminder';
import { inTransaction, Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { isAdminRole, isRoleCode, Role } from '../domain/roles';
import { generateApiKey, hashPassword } from '../domain/secrets';
import { realmHost } from '../domain/realm-address';
import { emailRealmProblem } from '../domain/realm-domains';
import { listRealmDomains } from '../queries/realm-domains';
import { parseSettings } from '../domain/user-settings';
import { apiEmailFor, BotTypeCode, checkNewAccount, emailKey } from '../domain/users';
import { loadConfig } from '../config';
import { adminRequired, ApiError, noSuchUser, ownerRequired } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { clearPushRegistrations } from '../queries/client-devices';
import { addGroupMembers, getSystemGroupIds } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import { getRealmById, getRealmUserDefaultsRaw } from '../queries/realms';
import { listUsersWhoMayAccess } from '../queries/user-access';
import type { UserRow } from '../queries/rows';
import {
  getUserByEmailKey,
  getUserById,
  hasOtherActiveUser,
  insertPersonalRecipient,
  insertUser,
  listActiveBotIdsOwnedBy,
  lockActiveOwnerIds,
  setUsersActive,
  updateUser,
} from '../queries/users';
import { toApiUser } from '../serializers/users';
import { queueDeactivationEvents, queueReactivationEvents } from './user-activation-events';
import type { EventBody } from '../events/bus';
import { directSystemGroups } from './user-groups';

export interface NewUser {
  realmId: number;
  email: string;
  fullName: string;
  /** A role code (default member); anything else is "Invalid role". */
  role?: number;
  password?: string | null;
  isBot?: boolean;
  botType?: BotTypeCode | null;
  botOwnerId?: number | null;
  canCreateUsers?: boolean;
  timezone?: string;
  /** Who creates the account, for the audit log: null for the command line, the system, or a sign-up. */
  actorId?: number | null;
  /** The invitation the person signed up with (a reusable link or an email invitation), for the audit log. */
  invitation?: { multiuseInviteId: number } | { emailInviteId: number };
  /** Made for the person (POST /users): their first login moves date_joined (feature level 475). */
  awaitingFirstLogin?: boolean;
}

/**
 * Creates a user inside the caller's transaction: the row with a fresh API
 * key and hashed password, personal settings copied from the realm's
 * defaults (later default changes never touch them), the personal recipient,
 * and membership in the role's system group (plus role:fullmembers for
 * members past the waiting period). Queues realm_user/add.
 */
export async function createUserInTx(tx: Tx, bus: AppContext['bus'] | null, input: NewUser): Promise<UserRow> {
  const { trx } = tx;
  const role = input.role ?? Role.MEMBER;
  if (!isRoleCode(role)) throw new ApiError('Invalid role');
  const realm = await getRealmById(trx, input.realmId);
  if (!realm) throw new ApiError('Invalid organization');
  const email = input.email.trim();
  if (await getUserByEmailKey(trx, realm.id, emailKey(email))) {
    throw new ApiError(`Email '${email}' already in use`);
  }
  const defaults = parseSettings(await getRealmUserDefaultsRaw(trx, realm.id));
  const now = nowSeconds();
  const userId = await insertUser(trx, {
    realm_id: realm.id,
    email,
    delivery_email: email,
    email_key: emailKey(email),
    full_name: input.fullName,
    role,
    is_bot: input.isBot ?? false,
    bot_type: input.botType ?? null,
    bot_owner_id: input.botOwnerId ?? null,
    api_key: generateApiKey(),
    password_hash: input.password ? await hashPassword(input.password) : null,
    can_create_users: input.canCreateUsers ?? false,
    timezone: input.timezone ?? '',
    date_joined: now,
    settings: JSON.stringify(defaults),
    awaiting_first_login: input.awaitingFirstLogin ?? false,
  });
  // A hidden address is replaced by a placeholder in the API email, as Zulip does.
  const apiEmail = apiEmailFor(userId, email, defaults.email_address_visibility, input.isBot ?? false, apiEmailHost(realm.string_id));
  if (apiEmail !== email) await updateUser(trx, userId, { email: apiEmail });
  const recipientId = await insertPersonalRecipient(trx, userId);
  await updateUser(trx, userId, { recipient_id: recipientId });
  const groups = await getSystemGroupIds(trx, realm.id);
  const memberOf = directSystemGroups(role, now, realm, now).map((name) => groups.get(name)!);
  for (const group of memberOf) await addGroupMembers(trx, group, [userId]);
  const audit = { realmId: realm.id, actorId: input.actorId ?? null, userId };
  await insertAuditLog(trx, [
    {
      ...audit,
      eventType: AuditEventType.USER_CREATED,
      extra: { role, ...invitationAuditExtra(input.invitation) },
    },
    ...memberOf.map((groupId) => ({ ...audit, eventType: AuditEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, groupId })),
  ]);
  const user = (await getUserById(trx, userId))!;
  if (bus) {
    const event: EventBody<Schema<'RealmUserAddEvent'>> = { type: 'realm_user', op: 'add', person: toApiUser(user, { viewer: null }) };
    const audience = await listUsersWhoMayAccess(trx, realm.id, userId, user.is_bot);
    tx.afterCommit(() => bus.publish({ event, userIds: audience }));
  }
  return user;
}

/** The user-created audit row names the invitation used: multiuse_invite_id or email_invite_id. */
function invitationAuditExtra(invitation: NewUser['invitation']): Record<string, number> {
  if (!invitation) return {};
  return 'multiuseInviteId' in invitation
    ? { multiuse_invite_id: invitation.multiuseInviteId }
    : { email_invite_id: invitation.emailInviteId };
}

/** POST /users: an administrator with can_create_users makes an account with a password. */
export async function doCreateUser(ctx: AppContext, actor: UserRow, input: Params<'create-user'>): Promise<UserRow> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  if (!actor.can_create_users) throw new ApiError('User not authorized to create users');
  const { email, fullName, password } = checkNewAccount(
    { email: input.email, fullName: input.full_name, password: input.password },
    'Bad name or username',
  );
  return inTransaction(ctx.db, async (tx) => {
    await checkEmailAllowedInRealm(tx, actor.realm_id, email);
    return createUserInTx(tx, ctx.bus, {
      realmId: actor.realm_id,
      email,
      fullName,
      password,
      actorId: actor.id,
      // Zulip creates these with tos_version TOS_VERSION_BEFORE_FIRST_LOGIN: the person has not logged in yet.
      awaitingFirstLogin: true,
    });
  });
}

/** POST /users refuses an address the organization does not take (Zulip's create_user_backend, email_allowed_for_realm). */
async function checkEmailAllowedInRealm(tx: Tx, realmId: number, email: string): Promise<void> {
  const realm = (await getRealmById(tx.trx, realmId))!;
  switch (emailRealmProblem(email, realm, await listRealmDomains(tx.trx, realmId))) {
    case 'outside-domains':
      throw new ApiError(`Email '${email}' not allowed in this organization`);
    case 'plus':
      throw new ApiError('Email addresses containing + are not allowed.');
    case 'disposable':
      throw new ApiError('Disposable email addresses are not allowed in this organization');
  }
}

/** Replaces a user's API key; the old one stops working at once. The audit row never holds a key. */
export async function doRegenerateApiKey(db: Knex, user: Pick<UserRow, 'id' | 'realm_id'>, actorId: number | null = null): Promise<string> {
  const apiKey = generateApiKey();
  await inTransaction(db, async ({ trx }) => {
    await updateUser(trx, user.id, { api_key: apiKey });
    // The apps logged in with the old key are logged out: their encrypted push registrations go
    // too, so no notification reaches a phone that can no longer read the account (Zulip since
    // feature level 492). The devices stay registered until the apps remove them.
    await clearPushRegistrations(trx, user.id);
    await insertAuditLog(trx, { realmId: user.realm_id, actorId, eventType: AuditEventType.USER_API_KEY_CHANGED, userId: user.id });
  });
  return apiKey;
}

/** Whether `user` is the organization's only active human owner (locks the owners until commit on MySQL). */
export async function isOnlyOwnerInTx(tx: Tx, user: UserRow): Promise<boolean> {
  if (user.role !== Role.OWNER || user.is_bot || !user.is_active) return false;
  const owners = await lockActiveOwnerIds(tx.trx, user.realm_id, Role.OWNER);
  return owners.length <= 1;
}

/**
 * Deactivates a user and, as Zulip does, the bots they own. The API key
 * stops working at once (authentication checks is_active on every
 * request); subscriptions are kept but marked is_user_active=false.
 * With an acting user, DELETE /users/{id}'s checks apply in Zulip's order;
 * without one (tests, the command line) it is the bare action.
 * Bots go first, as in Zulip; src/actions/user-activation-events.ts
 * says which events each account's deactivation makes.
 */
export async function doDeactivateUser(ctx: AppContext, userId: number, actor: UserRow | null = null): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const target = actor
      ? await accessUserForAdmin(tx.trx, actor, userId, { allowDeactivated: false, allowBots: false })
      : await getUserById(tx.trx, userId);
    if (!target) throw noSuchUser();
    if (actor && target.role === Role.OWNER && actor.role !== Role.OWNER) throw ownerRequired();
    if (actor && (await isOnlyOwnerInTx(tx, target))) throw new ApiError('Cannot deactivate the only organization owner');
    await deactivateInTx(tx, ctx, target, actor?.id ?? null);
  });
}

/**
 * DELETE /users/me: the caller deactivates their own account. Zulip refuses
 * when the caller is the organization's only active account (bots count, as
 * in Zulip's count) and when they are its only owner; then it is the
 * deactivation an administrator would make, with the caller as actor.
 */
export async function doDeactivateOwnUser(ctx: AppContext, user: UserRow): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const self = await getUserById(tx.trx, user.id);
    // Authentication has just seen the account active; a concurrent request may not have.
    if (!self || !self.is_active) throw noSuchUser();
    if (!(await hasOtherActiveUser(tx.trx, self.realm_id, self.id))) {
      throw new ApiError('Cannot deactivate the only user.', 'CANNOT_DEACTIVATE_LAST_USER', 400, { is_last_owner: false, entity: 'user' });
    }
    if (await isOnlyOwnerInTx(tx, self)) {
      throw new ApiError('Cannot deactivate the only organization owner.', 'CANNOT_DEACTIVATE_LAST_USER', 400, {
        is_last_owner: true,
        entity: 'organization owner',
      });
    }
    await deactivateInTx(tx, ctx, self, self.id);
  });
}

/** The deactivation itself: the user and the bots they own, audit rows, and events after commit. */
export async function deactivateInTx(tx: Tx, ctx: AppContext, target: UserRow, actorId: number | null): Promise<void> {
  const bots = await listActiveBotIdsOwnedBy(tx.trx, target.id);
  await setUsersActive(tx.trx, [...bots, target.id], false);
  // Zulip's delete_user_sessions: a deactivated account is logged out of every browser at once.
  await deleteSessionsOfUsers(tx.trx, [...bots, target.id]);
  const audit = { realmId: target.realm_id, actorId, eventType: AuditEventType.USER_DEACTIVATED };
  await insertAuditLog(
    tx.trx,
    [target.id, ...bots].map((userId) => ({ ...audit, userId })),
  );
  for (const id of bots)
    await queueDeactivationEvents(tx, ctx.bus, { id, realm_id: target.realm_id, is_bot: true, bot_owner_id: target.id });
  await queueDeactivationEvents(tx, ctx.bus, target);
  // Zulip's revoke_invites_generated_by_user: the user's usable invitations stop working; administrators are told.
  const revoked = await revokeInvitationsBy(tx.trx, target.id, nowSeconds());
  if (revoked.revoked) await queueInvitesChanged(tx, ctx.bus, target.realm_id, []);
  // Their reminders would carry dead links.
  for (const email of revoked.emails) await withdrawPendingEmails(tx, invitationReminderEmail, email);
}

/**
 * POST /users/{id}/reactivate: an administrator restores a deactivated
 * user or bot; its API key and subscriptions work again.
 */
export async function doReactivateUser(ctx: AppContext, caller: Caller, userId: number): Promise<void> {
  const actor = caller.user;
  await inTransaction(ctx.db, async (tx) => {
    const target = await accessUserForAdmin(tx.trx, actor, userId, { allowDeactivated: true, allowBots: true });
    // Zulip's access check lets active users through; reactivating one would only repeat its events.
    if (target.is_active) throw new ApiError('User is already active');
    if (target.is_bot) {
      // As Zulip's reactivate_user_backend: bringing a bot back is creating one, so the
      // administrator must be allowed to create its type, and its name must be free.
      const realm = caller.realm;
      checkBotCreationPolicy(
        target.bot_type ?? 0,
        inGroup(caller, realm.can_create_bots_group),
        inGroup(caller, realm.can_create_write_only_bots_group),
      );
      if (await isNameOfActiveUser(tx.trx, target.realm_id, target.full_name)) {
        throw new ApiError(
          `There is already an active bot named "${target.full_name}" in this organization. To reactivate this bot, you must rename or deactivate the other one first.`,
        );
      }
    }
    await setUsersActive(tx.trx, [target.id], true);
    await insertAuditLog(tx.trx, {
      realmId: target.realm_id,
      actorId: actor.id,
      eventType: AuditEventType.USER_REACTIVATED,
      userId: target.id,
    });
    await queueReactivationEvents(tx, ctx.bus, target);
  });
}

/**
 * The host part of placeholder API emails: the organization's host name
 * (Zulip's realm host). Read from the environment: the callers that create
 * users (sign-ups, the command line, the notification bot) carry no
 * configuration; EXTERNAL_URL's host name is the same in every process.
 */
function apiEmailHost(realmStringId: string): string {
  return realmHost(loadConfig().externalUrl, realmStringId);
}
