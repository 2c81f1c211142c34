import crypto from 'node:crypto';
import { isAdminRole, isGuestRole, isModeratorOrAbove, isOwnerRole } from '../domain/roles';
import { EmailVisibility, emailVisibilityOf } from '../domain/user-settings';
import type { UserRow } from '../queries/rows';

/** Zulip formats date_joined as an ISO 8601 string with an explicit +00:00 offset. */
export function isoFromSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('Z', '+00:00');
}

/**
 * The avatar URL. Parley has no avatar uploads yet, so every user has a
 * Gravatar-style URL derived from the delivery email; with client_gravatar a
 * client that can see the email computes it itself and gets null.
 */
export function avatarUrl(user: UserRow, clientGravatar: boolean): string | null {
  if (clientGravatar && user.avatar_source === 'G') return null;
  const hash = crypto.createHash('md5').update(user.delivery_email.toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${user.avatar_version}`;
}

export type ProfileData = Record<string, { value: string; rendered_value?: string | null }>;

/** profile_data maps by user: field ID (as a string) → value, with rendered_value for Markdown fields. */
export function toApiProfileData(
  values: ReadonlyArray<{ user_id: number; field_id: number; value: string; rendered_value: string | null }>,
): Map<number, ProfileData> {
  const out = new Map<number, ProfileData>();
  for (const v of values) {
    const data = out.get(v.user_id) ?? {};
    data[String(v.field_id)] = v.rendered_value == null ? { value: v.value } : { value: v.value, rendered_value: v.rendered_value };
    out.set(v.user_id, data);
  }
  return out;
}

export interface UserViewOptions {
  /** The user looking; null for an audience-wide event. */
  viewer: UserRow | null;
  clientGravatar?: boolean;
  profileData?: ProfileData;
}

/** Whether `viewer` may see `user`'s real (delivery) email, per the user's email_address_visibility. */
export function canSeeDeliveryEmail(user: UserRow, viewer: UserRow | null): boolean {
  // Bots' addresses are never private (feature level 163).
  if (user.is_bot || (viewer && viewer.id === user.id)) return true;
  const visibility = emailVisibilityOf(user.settings);
  if (visibility === EmailVisibility.EVERYONE) return true;
  if (!viewer) return false;
  switch (visibility) {
    case EmailVisibility.MEMBERS:
      return !isGuestRole(viewer.role);
    case EmailVisibility.MODERATORS:
      return isModeratorOrAbove(viewer.role);
    case EmailVisibility.ADMINS:
      return isAdminRole(viewer.role);
    default:
      return false;
  }
}

/** The user object of GET /users, GET /users/{id}, realm_users and realm_user events. */
export function toApiUser(user: UserRow, opts: UserViewOptions) {
  const showEmail = canSeeDeliveryEmail(user, opts.viewer);
  const out: Record<string, unknown> = {
    user_id: user.id,
    email: user.email,
    delivery_email: showEmail ? user.delivery_email : null,
    full_name: user.full_name,
    avatar_url: avatarUrl(user, Boolean(opts.clientGravatar) && showEmail),
    avatar_version: user.avatar_version,
    is_admin: isAdminRole(user.role),
    is_owner: isOwnerRole(user.role),
    is_guest: isGuestRole(user.role),
    is_bot: user.is_bot,
    is_active: user.is_active,
    is_imported_stub: user.is_imported_stub,
    role: user.role,
    timezone: user.timezone,
    date_joined: isoFromSeconds(user.date_joined),
  };
  if (user.is_bot) {
    out.bot_type = user.bot_type;
    out.bot_owner_id = user.bot_owner_id;
  } else if (opts.profileData) {
    out.profile_data = opts.profileData;
  }
  return out;
}

/** GET /users/me: the user object as its owner sees it, plus max_message_id. */
export function toApiOwnUser(user: UserRow, maxMessageId: number, profileData: ProfileData) {
  const base = toApiUser(user, { viewer: user, clientGravatar: false, profileData });
  return { ...base, delivery_email: user.delivery_email, avatar_url: avatarUrl(user, false)!, max_message_id: maxMessageId };
}
