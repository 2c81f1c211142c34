/**
 * Compile-time checks (tsc, not jest): the users family's serializers and
 * events are the contract's types, so a wire object missing a field the
 * contract requires does not compile. Each `@ts-expect-error` below fails
 * the type check if the line under it ever compiles.
 */
import type { Data, Schema } from '../../src/contract';
import type { EventBody } from '../../src/events/bus';
import type { InitialState, StatePart } from '../../src/events/register/types';
import type { realmState } from '../../src/events/register/realm';
import type { realmUserState } from '../../src/events/register/users';
import type { toApiServerSettings } from '../../src/serializers/server';
import type { toApiOwnUser, toApiUser, toApiUserGroup } from '../../src/serializers/users';

type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

// What the serializers return is what the contract names, nothing looser.
export type Checks = [
  Assert<Exactly<ReturnType<typeof toApiUser>, Schema<'User'>>>,
  Assert<Exactly<ReturnType<typeof toApiOwnUser>, Data<'get-own-user'>>>,
  Assert<Exactly<ReturnType<typeof toApiUserGroup>, Schema<'UserGroup'>>>,
  Assert<Exactly<ReturnType<typeof toApiServerSettings>, Data<'get-server-settings'>>>,
  // Each part of the initial state has every key it owns, typed as the register response types it.
  Assert<ReturnType<typeof realmState> extends Partial<InitialState> ? true : false>,
  Assert<Awaited<ReturnType<typeof realmUserState>> extends Partial<InitialState> ? true : false>,
];

const user: Omit<Schema<'User'>, 'role'> = {
  user_id: 10,
  email: 'cordelia@example.com',
  delivery_email: null,
  full_name: 'Cordelia Lear',
  avatar_url: null,
  avatar_version: 1,
  is_admin: false,
  is_owner: false,
  is_guest: false,
  is_bot: false,
  is_active: true,
  is_imported_stub: false,
  timezone: '',
  date_joined: '2025-01-15T09:30:00+00:00',
};

// @ts-expect-error a user object without `role` is not the contract's User (toApiUser returns one)
export const userWithoutRole: ReturnType<typeof toApiUser> = user;

// @ts-expect-error a role the contract does not list is refused
export const badRole: ReturnType<typeof toApiUser> = { ...user, role: 500 };

// @ts-expect-error realm_user update events carry the person that changed
export const updateWithoutPerson: EventBody<Schema<'RealmUserUpdateEvent'>> = { type: 'realm_user', op: 'update' };

// @ts-expect-error user_group membership events name the users
export const membersWithoutUsers: EventBody<Schema<'UserGroupMembersEvent'>> = { type: 'user_group', op: 'add_members', group_id: 1 };

// @ts-expect-error a state part owns all its keys: max_message_id cannot be left out of the `message` part
export const messagePart: StatePart<'max_message_id'> = {};
