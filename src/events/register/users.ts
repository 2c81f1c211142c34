import type { Knex } from 'knex';
import { isAdminRole, isGuestRole, isOwnerRole, Role } from '../../domain/roles';
import { NOTIFICATION_SOUNDS, parseSettings, UserSettings } from '../../domain/user-settings';
import { listRealmProfileValues, listUserIdsSharingRecipients } from '../../queries/register';
import type { UserRow } from '../../queries/rows';
import { listRealmUsers } from '../../queries/users';
import { avatarUrl, toApiUser } from '../../serializers/users';

/** The sounds Zulip ships (static/audio/notification_sounds) and its emoji sets. */
const EMOJISET_CHOICES = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
];
/** Personal settings that have no organization default. */
const PERSONAL_ONLY: ReadonlyArray<keyof UserSettings> = [
  'timezone',
  'allow_private_data_export',
  'enable_login_emails',
  'enable_marketing_emails',
];

type ProfileData = Record<string, { value: string; rendered_value?: string | null }>;

/**
 * The `realm_user` part: every user the caller may see (active in
 * realm_users, deactivated in realm_non_active_users) and the caller's own
 * identity. Users outside can_access_all_users_group see only the people
 * they share a channel or conversation with, and bots.
 */
export async function realmUserState(db: Knex, viewer: UserRow, mayAccessAll: boolean, clientGravatar: boolean) {
  const [users, values, sharing] = await Promise.all([
    listRealmUsers(db, viewer.realm_id),
    listRealmProfileValues(db, viewer.realm_id),
    mayAccessAll ? Promise.resolve(null) : listUserIdsSharingRecipients(db, viewer.id),
  ]);
  const profiles = new Map<number, ProfileData>();
  for (const v of values) {
    const data = profiles.get(v.user_id) ?? {};
    data[String(v.field_id)] = v.rendered_value == null ? { value: v.value } : { value: v.value, rendered_value: v.rendered_value };
    profiles.set(v.user_id, data);
  }
  const visible = sharing ? new Set([...sharing, viewer.id]) : null;
  const realmUsers: unknown[] = [];
  const nonActive: unknown[] = [];
  for (const u of users) {
    if (visible && !visible.has(u.id) && !u.is_bot) continue;
    const api = toApiUser(u, { viewer, clientGravatar, profileData: u.is_bot ? undefined : (profiles.get(u.id) ?? {}) });
    (u.is_active ? realmUsers : nonActive).push(api);
  }
  // The caller's own avatar is always a URL (Zulip forces client_gravatar off here).
  const ownAvatar = avatarUrl(viewer, false)!;
  return {
    realm_users: realmUsers,
    realm_non_active_users: nonActive,
    cross_realm_bots: [],
    user_id: viewer.id,
    email: viewer.email,
    delivery_email: viewer.delivery_email,
    full_name: viewer.full_name,
    avatar_source: viewer.avatar_source,
    avatar_url: ownAvatar,
    avatar_url_medium: `${ownAvatar}&s=500`,
    is_admin: isAdminRole(viewer.role),
    is_owner: isOwnerRole(viewer.role),
    is_moderator: viewer.role === Role.MODERATOR,
    is_guest: isGuestRole(viewer.role),
  };
}

export function userSettingsState(user: UserRow) {
  return { ...parseSettings(user.settings), available_notification_sounds: NOTIFICATION_SOUNDS, emojiset_choices: EMOJISET_CHOICES };
}

export function realmUserSettingsDefaultsState(raw: string | undefined) {
  const settings: Record<string, unknown> = { ...parseSettings(raw) };
  for (const k of PERSONAL_ONLY) delete settings[k];
  return { ...settings, available_notification_sounds: NOTIFICATION_SOUNDS, emojiset_choices: EMOJISET_CHOICES };
}
