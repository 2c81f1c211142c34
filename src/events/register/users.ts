import type { Knex } from 'knex';
import type { Schema } from '../../contract';
import { canCreateChannelKind } from '../../access/channels';
import { inGroup, type Viewer } from '../../access/viewer';
import { FieldType } from '../../domain/profile-fields';
import { isAdminRole, isGuestRole, isModeratorOrAbove, isOwnerRole } from '../../domain/roles';
import { NOTIFICATION_SOUNDS, parseSettings, realmDefaultsOf } from '../../domain/user-settings';
import { listCustomProfileFields, listRealmProfileValues, listUserIdsSharingRecipients } from '../../queries/register';
import type { RealmRow, UserRow } from '../../queries/rows';
import { listRealmUsers } from '../../queries/users';
import { fullAvatarUrl, toApiCustomProfileField, toApiProfileData, toApiRealmUser } from '../../serializers/users';
import { getRealmBots } from '../../access/bots';
import type { StatePart } from './types';

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
  | 'is_guest'
  | 'can_create_public_streams'
  | 'can_create_private_streams'
  | 'can_create_web_public_streams'
  | 'can_create_streams'
  | 'can_invite_others_to_realm';

export interface RealmUserStateOptions {
  clientGravatar: boolean;
  /** The server's WEB_PUBLIC_STREAMS_ENABLED. */
  webPublicStreamsEnabled: boolean;
}

/**
 * The `realm_user` part: every user the caller may see (active in
 * realm_users, deactivated in realm_non_active_users, both without
 * is_active, as Zulip's post_process_state leaves them) and the caller's own
 * identity and permissions. Users outside can_access_all_users_group see
 * only the people they share a channel or conversation with, and bots.
 */
export async function realmUserState(
  db: Knex,
  viewer: Viewer,
  realm: RealmRow,
  o: RealmUserStateOptions,
): Promise<StatePart<RealmUserKey>> {
  const me = viewer.user;
  const mayAccessAll = inGroup(viewer, realm.can_access_all_users_group);
  const [users, values, sharing] = await Promise.all([
    listRealmUsers(db, me.realm_id),
    listRealmProfileValues(db, me.realm_id),
    mayAccessAll ? Promise.resolve(null) : listUserIdsSharingRecipients(db, me.id),
  ]);
  const profiles = toApiProfileData(values);
  const visible = sharing ? new Set([...sharing, me.id]) : null;
  const realmUsers: Array<Schema<'RealmUser'>> = [];
  const nonActive: Array<Schema<'RealmUser'>> = [];
  for (const u of users) {
    if (visible && !visible.has(u.id) && !u.is_bot) continue;
    const api = toApiRealmUser(u, {
      viewer: me,
      clientGravatar: o.clientGravatar,
      profileData: u.is_bot ? undefined : (profiles.get(u.id) ?? {}),
    });
    (u.is_active ? realmUsers : nonActive).push(api);
  }
  const channelCreation = channelCreationRights(viewer, realm, o.webPublicStreamsEnabled);
  // The caller's own avatar is always a URL (Zulip forces client_gravatar off here).
  return {
    realm_users: realmUsers,
    realm_non_active_users: nonActive,
    cross_realm_bots: [],
    user_id: me.id,
    email: me.email,
    delivery_email: me.delivery_email,
    full_name: me.full_name,
    avatar_source: me.avatar_source,
    avatar_url: fullAvatarUrl(me),
    avatar_url_medium: fullAvatarUrl(me, true),
    is_admin: isAdminRole(me.role),
    is_owner: isOwnerRole(me.role),
    // "At least a moderator" since feature level 380, as Zulip's is_moderator property.
    is_moderator: isModeratorOrAbove(me.role),
    is_guest: isGuestRole(me.role),
    ...channelCreation,
    can_create_streams:
      channelCreation.can_create_public_streams ||
      channelCreation.can_create_private_streams ||
      channelCreation.can_create_web_public_streams,
    can_invite_others_to_realm: inGroup(viewer, realm.can_invite_users_group),
  };
}

/** Which channels the caller may create, by the rule channel creation applies (canCreateChannelKind). */
function channelCreationRights(
  viewer: Viewer,
  realm: RealmRow,
  webPublicStreamsEnabled: boolean,
): StatePart<'can_create_public_streams' | 'can_create_private_streams' | 'can_create_web_public_streams'> {
  return {
    can_create_public_streams: canCreateChannelKind(viewer, realm, 'public', webPublicStreamsEnabled),
    can_create_private_streams: canCreateChannelKind(viewer, realm, 'private', webPublicStreamsEnabled),
    can_create_web_public_streams: canCreateChannelKind(viewer, realm, 'web_public', webPublicStreamsEnabled),
  };
}

/** `realm_bot`: the bots the caller may administer - every bot of the organization for administrators, their own for others. */
export async function realmBotsState(db: Knex, viewer: Viewer): Promise<StatePart<'realm_bots'>> {
  return { realm_bots: await getRealmBots(db, viewer.user) };
}

/**
 * Every kind of custom profile field, keyed by Zulip's name for it (the
 * `type` of a field is the id). Parley's clients all know pronouns, the
 * kind Zulip leaves out for old mobile apps.
 */
const CUSTOM_PROFILE_FIELD_TYPES: Record<keyof typeof FieldType, Schema<'CustomProfileFieldType'>> = {
  SHORT_TEXT: { id: FieldType.SHORT_TEXT, name: 'Short text' },
  LONG_TEXT: { id: FieldType.LONG_TEXT, name: 'Long text' },
  SELECT: { id: FieldType.SELECT, name: 'List of options' },
  DATE: { id: FieldType.DATE, name: 'Date' },
  URL: { id: FieldType.URL, name: 'Link' },
  USER: { id: FieldType.USER, name: 'Users' },
  EXTERNAL_ACCOUNT: { id: FieldType.EXTERNAL_ACCOUNT, name: 'External account' },
  PRONOUNS: { id: FieldType.PRONOUNS, name: 'Pronouns' },
};

/** `custom_profile_fields`: the organization's fields in display order, and the kinds of field there are. */
export async function customProfileFieldsState(
  db: Knex,
  realmId: number,
): Promise<StatePart<'custom_profile_fields' | 'custom_profile_field_types'>> {
  const rows = await listCustomProfileFields(db, realmId);
  const types: Record<string, Schema<'CustomProfileFieldType'>> = {};
  for (const [key, t] of Object.entries(CUSTOM_PROFILE_FIELD_TYPES)) types[key] = { ...t };
  return { custom_profile_fields: rows.map(toApiCustomProfileField), custom_profile_field_types: types };
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
