import type { Knex } from 'knex';
import type { Schema } from '../../contract';
import { isAdminRole, isGuestRole, isOwnerRole, Role } from '../../domain/roles';
import { NOTIFICATION_SOUNDS, parseSettings, realmDefaultsOf } from '../../domain/user-settings';
import { listRealmProfileValues, listUserIdsSharingRecipients } from '../../queries/register';
import type { UserRow } from '../../queries/rows';
import { listRealmUsers } from '../../queries/users';
import { fullAvatarUrl, toApiProfileData, toApiUser } from '../../serializers/users';
import type { StatePart } from './state';

/** Zulip's emoji sets. */
const EMOJISET_CHOICES: Array<Schema<'EmojisetChoice'>> = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
];

type RealmUserKey =
  | 'realm_users'
  | 'realm_non_active_users'
  | 'cross_realm_bots'
  | 'user_id'
  | 'email'
  | 'delivery_email'
  | 'full_name'
  | 'avatar_source'
  | 'avatar_url'
  | 'avatar_url_medium'
  | 'is_admin'
  | 'is_owner'
  | 'is_moderator'
  | 'is_guest';

/**
 * The `realm_user` part: every user the caller may see (active in
 * realm_users, deactivated in realm_non_active_users) and the caller's own
 * identity. Users outside can_access_all_users_group see only the people
 * they share a channel or conversation with, and bots.
 */
export async function realmUserState(
  db: Knex,
  viewer: UserRow,
  mayAccessAll: boolean,
  clientGravatar: boolean,
): Promise<StatePart<RealmUserKey>> {
  const [users, values, sharing] = await Promise.all([
    listRealmUsers(db, viewer.realm_id),
    listRealmProfileValues(db, viewer.realm_id),
    mayAccessAll ? Promise.resolve(null) : listUserIdsSharingRecipients(db, viewer.id),
  ]);
  const profiles = toApiProfileData(values);
  const visible = sharing ? new Set([...sharing, viewer.id]) : null;
  const realmUsers: Array<Schema<'User'>> = [];
  const nonActive: Array<Schema<'User'>> = [];
  for (const u of users) {
    if (visible && !visible.has(u.id) && !u.is_bot) continue;
    const api = toApiUser(u, { viewer, clientGravatar, profileData: u.is_bot ? undefined : (profiles.get(u.id) ?? {}) });
    (u.is_active ? realmUsers : nonActive).push(api);
  }
  // The caller's own avatar is always a URL (Zulip forces client_gravatar off here).
  return {
    realm_users: realmUsers,
    realm_non_active_users: nonActive,
    cross_realm_bots: [],
    user_id: viewer.id,
    email: viewer.email,
    delivery_email: viewer.delivery_email,
    full_name: viewer.full_name,
    avatar_source: viewer.avatar_source,
    avatar_url: fullAvatarUrl(viewer),
    avatar_url_medium: fullAvatarUrl(viewer, true),
    is_admin: isAdminRole(viewer.role),
    is_owner: isOwnerRole(viewer.role),
    is_moderator: viewer.role === Role.MODERATOR,
    is_guest: isGuestRole(viewer.role),
  };
}

export function userSettingsState(user: UserRow): Schema<'UserSettings'> {
  return {
    ...parseSettings(user.settings),
    // The time zone lives in its own column (the user object carries it too).
    timezone: user.timezone,
    available_notification_sounds: [...NOTIFICATION_SOUNDS],
    emojiset_choices: EMOJISET_CHOICES,
  };
}

export function realmUserSettingsDefaultsState(raw: string | undefined): Schema<'UserSettingsDefaults'> {
  return {
    ...realmDefaultsOf(parseSettings(raw)),
    available_notification_sounds: [...NOTIFICATION_SOUNDS],
    emojiset_choices: EMOJISET_CHOICES,
  };
}
