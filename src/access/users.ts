import type { Knex } from 'knex';
import type { Data, Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { realmHost } from '../domain/realm-address';
import { isAdminRole } from '../domain/roles';
import { emailVisibilityOf, emailVisibleToRole } from '../domain/user-settings';
import { emailKey, userIdOfPlaceholderEmail } from '../domain/users';
import { ApiError, noSuchUser } from '../errors';
import { listProfileValuesOf } from '../queries/profile-fields';
import { listUserIdsSharingRecipients } from '../queries/register';
import type { UserRow } from '../queries/rows';
import { getUserByEmailKey, getUserInRealm, listRealmUsers } from '../queries/users';
import { toApiOwnUser, toApiProfileData, toApiUser } from '../serializers/users';
import { inGroup, Caller, Viewer } from './viewer';

type Q = Knex | Knex.Transaction;

/** How GET /users and GET /users/{id} present users: client_gravatar (default true) and include_custom_profile_fields. */
type UserListOptions = Pick<Params<'get-users'>, 'client_gravatar' | 'include_custom_profile_fields'>;

/** The user object of a listing, with profile_data only when asked for. */
function toListedUser(u: UserRow, viewer: Viewer, opts: UserListOptions, profiles: Map<number, Schema<'ProfileData'>>) {
  return toApiUser(u, {
    viewer: viewer.user,
    clientGravatar: opts.client_gravatar ?? true,
    profileData: opts.include_custom_profile_fields ? (profiles.get(u.id) ?? {}) : undefined,
  });
}

/** GET /users/me: the caller's own record. */
export async function getOwnUser(ctx: AppContext, user: UserRow): Promise<Data<'get-own-user'>> {
  const { maxMessageId, values } = await ctx.caches.ownUsers.get(user);
  return toApiOwnUser(user, maxMessageId, user.is_bot ? {} : (toApiProfileData(values).get(user.id) ?? {}));
}

/**
 * The users the viewer may see, or null for everyone: members of the
 * realm's can_access_all_users_group see all; others (guests, by default
 * nobody is limited) see themselves, bots, and whoever shares a channel
 * or conversation with them (Zulip's get_accessible_user_ids).
 */
async function visibleUserIds(db: Knex, viewer: Caller): Promise<Set<number> | null> {
  const realm = viewer.realm;
  if (inGroup(viewer, realm.can_access_all_users_group)) return null;
  return new Set([viewer.user.id, ...(await listUserIdsSharingRecipients(db, viewer.user.id))]);
}

const mayView = (visible: Set<number> | null, u: UserRow) => visible === null || u.is_bot || visible.has(u.id);

/**
 * GET /users: every user and bot the viewer may see, deactivated ones
 * included, by ID; with user_ids (feature level 384) only those. Zulip
 * filters the organization's users by the IDs it is given and never
 * complains: an ID of nobody, or of another organization's user, is simply
 * not in the answer, and neither is anyone the viewer may not see.
 */
export async function getUsers(ctx: AppContext, viewer: Caller, opts: Params<'get-users'>): Promise<Data<'get-users'>> {
  const realmId = viewer.user.realm_id;
  const ids = opts.user_ids ? [...new Set(opts.user_ids)] : undefined;
  const [users, visible, values] = await Promise.all([
    listRealmUsers(ctx.db, realmId, ids),
    visibleUserIds(ctx.db, viewer),
    opts.include_custom_profile_fields ? listProfileValuesOf(ctx.db, realmId, ids ?? null) : Promise.resolve([]),
  ]);
  const profiles = toApiProfileData(values);
  return { members: users.filter((u) => mayView(visible, u)).map((u) => toListedUser(u, viewer, opts, profiles)) };
}

/**
 * GET /users/{id}: one user or bot of the viewer's organization, active or
 * not. Unknown IDs and other organizations' users are "No such user"; a
 * user the viewer may not see is "Insufficient permission", as Zulip's
 * access_user_common answers.
 */
export async function getUser(ctx: AppContext, viewer: Caller, p: Params<'get-user'>): Promise<Data<'get-user'>> {
  const target = await getUserInRealm(ctx.db, viewer.user.realm_id, p.user_id);
  if (!target) throw noSuchUser();
  if (!mayView(await visibleUserIds(ctx.db, viewer), target)) throw new ApiError('Insufficient permission');
  const values = p.include_custom_profile_fields ? await listProfileValuesOf(ctx.db, target.realm_id, [target.id]) : [];
  return { user: toListedUser(target, viewer, p, toApiProfileData(values)) };
}

/**
 * A user named by email (Zulip's access_user_by_email), before any check of
 * what the caller may do to them. A placeholder API email
 * (user<id>@<organization host>) names the user by ID. Any other address is
 * a real one, compared case-insensitively, and finds only a user whose
 * email_address_visibility lets the caller's role see it (bots' addresses
 * are public): otherwise, as for an unknown address, "No such user", so an
 * address cannot be confirmed by looking it up.
 */
export async function findUserByEmail(q: Q, caller: Caller, email: string, host: string): Promise<UserRow> {
  const realmId = caller.user.realm_id;
  const id = userIdOfPlaceholderEmail(email, host);
  const target =
    id !== null
      ? id <= 2 ** 31 - 1
        ? await getUserInRealm(q, realmId, id)
        : undefined
      : await getUserByEmailKey(q, realmId, emailKey(email));
  if (!target) throw noSuchUser();
  if (id === null && !target.is_bot && !emailVisibleToRole(emailVisibilityOf(target.settings), caller.user.role)) throw noSuchUser();
  return target;
}

/** GET /users/{email}: as GET /users/{id} for the user the address names. */
export async function getUserByEmail(ctx: AppContext, viewer: Caller, p: Params<'get-user-by-email'>): Promise<Data<'get-user-by-email'>> {
  const target = await findUserByEmail(ctx.db, viewer, p.email, realmHost(ctx.config.externalUrl, viewer.realm.string_id));
  return getUser(ctx, viewer, { ...p, user_id: target.id });
}

/**
 * A user of the actor's organization that an administrator acts on
 * (Zulip's access_user_by_id with for_admin): "No such user" for unknown
 * IDs, for other organizations' users and, unless allowed, for bots;
 * "User is deactivated" unless allowed; "Insufficient permission" for a
 * caller who is not an administrator.
 */
export async function accessUserForAdmin(
  q: Q,
  actor: UserRow,
  userId: number,
  opts: { allowDeactivated: boolean; allowBots: boolean },
): Promise<UserRow> {
  const target = await getUserInRealm(q, actor.realm_id, userId);
  if (!target || (target.is_bot && !opts.allowBots)) throw noSuchUser();
  if (!target.is_active && !opts.allowDeactivated) throw new ApiError('User is deactivated');
  if (!isAdminRole(actor.role)) throw new ApiError('Insufficient permission');
  return target;
}
