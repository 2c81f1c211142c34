import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Data, Schema } from '../contract';
import type { EventBody } from '../events/bus';
import { AvatarSource, uploadedAvatarUrl } from '../domain/avatars';
import { isAdminRole, isGuestRole, isOwnerRole } from '../domain/roles';
import { EmailVisibility, emailVisibilityOf, emailVisibleToRole } from '../domain/user-settings';
import type { UserGroupRow } from '../queries/groups';
import type { ProfileValueRow } from '../queries/profile-fields';
import type { CustomProfileFieldRow } from '../queries/register';
import type { UserRow } from '../queries/rows';
import type { GroupLookup } from './subscriptions';

/** Zulip formats date_joined as an ISO 8601 string with an explicit +00:00 offset. */
export function isoFromSeconds(seconds: number): string {
  let iso = isoBySeconds.get(seconds);
  if (iso === undefined) {
    iso = new Date(seconds * 1000).toISOString().replace('Z', '+00:00');
    isoBySeconds.set(seconds, iso);
  }
  return iso;
}

/*
 * Pure functions of one value, remembered: every user object of a response
 * formats its date_joined and (without client_gravatar) hashes its email
 * again, 1–2 µs each, for the same few thousand users (GET /users/me spent
 * 2.5 % of its CPU on the two, profiled).
 */
const isoBySeconds = new LRUCache<number, string>({ max: 20_000 });
const gravatarHashes = new LRUCache<string, string>({ max: 20_000 });

/** The Gravatar URL of an email address (Zulip's default avatar), at 500 px for the medium size. */
export function gravatarUrlOf(email: string, version: number, medium = false): string {
  let hash = gravatarHashes.get(email);
  if (hash === undefined) {
    hash = crypto.createHash('md5').update(email.toLowerCase()).digest('hex');
    gravatarHashes.set(email, hash);
  }
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? '&s=500' : ''}&version=${version}`;
}

/** The Gravatar URL derived from the user's delivery email. */
export function gravatarUrl(user: UserRow, medium = false): string {
  return gravatarUrlOf(user.delivery_email, user.avatar_version, medium);
}

/** The user's avatar URL: the uploaded image (avatar_source 'U') or the Gravatar one, each with its version. */
export function fullAvatarUrl(user: UserRow, medium = false): string {
  if (user.avatar_source === AvatarSource.UPLOADED && user.avatar_hash) {
    return uploadedAvatarUrl(user.realm_id, user.avatar_hash, user.avatar_version, medium);
  }
  return gravatarUrl(user, medium);
}

/**
 * The avatar URL as a client sees it: with client_gravatar, one that can see
 * the email computes a Gravatar URL itself and gets null; an uploaded
 * avatar is always a URL (a client cannot compute it).
 */
export function avatarUrl(user: UserRow, clientGravatar: boolean): string | null {
  if (clientGravatar && user.avatar_source === AvatarSource.GRAVATAR) return null;
  return fullAvatarUrl(user);
}

/** profile_data maps by user: field ID (as a string) → value, with rendered_value for Markdown fields. */
export function toApiProfileData(values: ReadonlyArray<ProfileValueRow>): Map<number, Schema<'ProfileData'>> {
  const out = new Map<number, Schema<'ProfileData'>>();
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
  profileData?: Schema<'ProfileData'>;
}

/** Whether `viewer` may see `user`'s real (delivery) email, per the user's email_address_visibility. */
export function canSeeDeliveryEmail(user: UserRow, viewer: UserRow | null): boolean {
  // Bots' addresses are never private (feature level 163).
  if (user.is_bot || (viewer && viewer.id === user.id)) return true;
  const visibility = emailVisibilityOf(user.settings);
  if (visibility === EmailVisibility.EVERYONE) return true;
  return viewer !== null && emailVisibleToRole(visibility, viewer.role);
}

/**
 * The fields every user object has, in Zulip's order, with the delivery email
 * and avatar URL the one looking is shown.
 */
function userFields<E extends string | null, A extends string | null>(user: UserRow, deliveryEmail: E, avatar: A) {
  return {
    user_id: user.id,
    email: user.email,
    delivery_email: deliveryEmail,
    full_name: user.full_name,
    avatar_url: avatar,
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
}

/** A bot names its type and owner; a human carries its profile data when there is some to show. */
function addKindFields(
  out: Pick<Schema<'User'>, 'bot_type' | 'bot_owner_id' | 'profile_data'>,
  user: UserRow,
  profileData: Schema<'ProfileData'> | undefined,
): void {
  if (user.is_bot) {
    out.bot_type = user.bot_type;
    out.bot_owner_id = user.bot_owner_id;
  } else if (profileData) {
    out.profile_data = profileData;
  }
}

/** The user object of GET /users, GET /users/{id}, realm_users and realm_user events. */
export function toApiUser(user: UserRow, opts: UserViewOptions): Schema<'User'> {
  const showEmail = canSeeDeliveryEmail(user, opts.viewer);
  const out: Schema<'User'> = userFields(
    user,
    showEmail ? user.delivery_email : null,
    avatarUrl(user, Boolean(opts.clientGravatar) && showEmail),
  );
  addKindFields(out, user, opts.profileData);
  return out;
}

/**
 * A user of POST /register's realm_users or realm_non_active_users: the
 * User object without is_active, which Zulip leaves out there (the list a
 * user is in says it).
 */
export function toApiRealmUser(user: UserRow, opts: UserViewOptions): Schema<'RealmUser'> {
  const { is_active: _listSaysIt, ...rest } = toApiUser(user, opts);
  return rest;
}

/**
 * GET /users/me: the user object as its owner sees it (the real email and
 * avatar URL always), plus max_message_id; profile_data for humans only.
 */
export function toApiOwnUser(user: UserRow, maxMessageId: number, profileData: Schema<'ProfileData'>): Data<'get-own-user'> {
  const out: Data<'get-own-user'> = { ...userFields(user, user.delivery_email, fullAvatarUrl(user)), max_message_id: maxMessageId };
  addKindFields(out, user, profileData);
  return out;
}

/** POST /fetch_api_key (and an accepted invitation): the credentials a client logs in with. */
export function toApiCredentials(user: UserRow): Data<'fetch-api-key'> {
  return { api_key: user.api_key, email: user.email, user_id: user.id };
}

/** A named or system group as GET /user_groups and realm_user_groups list it, with its direct members and subgroups. */
export function toApiUserGroup(
  g: UserGroupRow & { name: string },
  members: number[],
  subgroups: number[],
  groups: GroupLookup,
): Schema<'UserGroup'> {
  return {
    id: g.id,
    name: g.name,
    description: g.description ?? '',
    members,
    direct_subgroup_ids: subgroups,
    is_system_group: g.is_system_group,
    date_created: g.date_created,
    creator_id: g.creator_id,
    deactivated: g.deactivated,
    can_add_members_group: groups.value(g.can_add_members_group),
    can_join_group: groups.value(g.can_join_group),
    can_leave_group: groups.value(g.can_leave_group),
    can_manage_group: groups.value(g.can_manage_group),
    can_mention_group: groups.value(g.can_mention_group),
    can_remove_members_group: groups.value(g.can_remove_members_group),
  };
}

/** realm_user update: the user's id and the one group of fields that changed. */
export function toApiRealmUserUpdateEvent(person: Schema<'RealmUserUpdatePerson'>): EventBody<Schema<'RealmUserUpdateEvent'>> {
  return { type: 'realm_user', op: 'update', person };
}

/** What a realm_bot entry says of a bot beside its user object: its defaults, by channel name, and its services. */
export interface RealmBotParts {
  bot: Pick<UserRow, 'id' | 'default_sending_channel_id' | 'default_events_register_channel_id' | 'default_all_public_streams'>;
  /** Channel names by id; a default naming a channel not in it is sent as null. */
  channelNames: ReadonlyMap<number, string>;
  services: ReadonlyArray<{ base_url: string; token: string; interface: number }>;
}

/**
 * A bot of POST /register's realm_bots and of realm_bot add events. Since
 * feature level 474 Zulip sends only what the user object lacks: the
 * default channels (by name), default_all_public_streams, and an outgoing
 * webhook bot's service.
 */
export function toApiRealmBot({ bot, channelNames, services }: RealmBotParts): Schema<'RealmBot'> {
  const nameOf = (id: number | null) => (id === null ? null : (channelNames.get(id) ?? null));
  return {
    user_id: bot.id,
    default_sending_stream: nameOf(bot.default_sending_channel_id),
    default_events_register_stream: nameOf(bot.default_events_register_channel_id),
    default_all_public_streams: bot.default_all_public_streams,
    services: services.map((s) => ({ base_url: s.base_url, token: s.token, interface: s.interface })),
  };
}

/** A custom profile field as POST /register lists it; display_in_profile_summary and use_for_user_matching only when true, as Zulip. */
export function toApiCustomProfileField(f: CustomProfileFieldRow): Schema<'CustomProfileField'> {
  const out: Schema<'CustomProfileField'> = {
    id: f.id,
    name: f.name,
    type: f.field_type,
    hint: f.hint,
    field_data: f.field_data,
    order: f.order,
    required: f.required,
    editable_by_user: f.editable_by_user,
  };
  if (f.display_in_profile_summary) out.display_in_profile_summary = true;
  if (f.use_for_user_matching) out.use_for_user_matching = true;
  return out;
}

/**
 * The `user` object of reaction events: the reacting user's id, API email and
 * name. Zulip dropped it at feature level 484; clients such as zulip-terminal
 * still read the reacting user from it (the events contract, ReactionEvent).
 */
export function toApiReactionUser(user: UserRow): NonNullable<Schema<'ReactionEvent'>['user']> {
  return { user_id: user.id, email: user.email, full_name: user.full_name };
}

/** user_group add_members / remove_members: users joined or left a group's direct members. */
export function toApiGroupMembersEvent(
  op: Schema<'UserGroupMembersEvent'>['op'],
  groupId: number,
  userIds: number[],
): EventBody<Schema<'UserGroupMembersEvent'>> {
  return { type: 'user_group', op, group_id: groupId, user_ids: userIds };
}

/** user_settings update: one of the user's own settings changed (to that user's clients only). */
export function toApiUserSettingsUpdateEvent(
  property: string,
  value: boolean | number | string,
  languageName?: string,
): EventBody<Schema<'UserSettingsUpdateEvent'>> {
  return { type: 'user_settings', op: 'update', property, value, ...(languageName !== undefined && { language_name: languageName }) };
}
