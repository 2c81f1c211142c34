/** Zulip's role codes: lower is more privileged. */
export const Role = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;
export type RoleCode = (typeof Role)[keyof typeof Role];
export const ROLE_CODES: readonly number[] = Object.values(Role);
export const isRoleCode = (n: number): n is RoleCode => ROLE_CODES.includes(n);

export const isAdminRole = (role: number) => role <= Role.ADMINISTRATOR;
export const isOwnerRole = (role: number) => role === Role.OWNER;
export const isModeratorOrAbove = (role: number) => role <= Role.MODERATOR;
export const isGuestRole = (role: number) => role === Role.GUEST;

/** The system group a role makes a user a direct member of. */
export function roleSystemGroup(role: number): SystemGroupName {
  switch (role) {
    case Role.OWNER:
      return 'role:owners';
    case Role.ADMINISTRATOR:
      return 'role:administrators';
    case Role.MODERATOR:
      return 'role:moderators';
    case Role.GUEST:
      return 'role:everyone';
    default:
      return 'role:members';
  }
}

/**
 * The eight system groups, in Zulip's creation order (so a fresh database
 * numbers them as Zulip does). Each listed group is a direct subgroup of the
 * next one up the chain: owners ⊂ administrators ⊂ moderators ⊂ fullmembers
 * ⊂ members ⊂ everyone ⊂ internet; nobody is empty.
 */
export const SYSTEM_GROUPS = [
  { name: 'role:nobody', description: 'Nobody' },
  { name: 'role:owners', description: 'Owners of this organization' },
  { name: 'role:administrators', description: 'Administrators of this organization, including owners' },
  { name: 'role:moderators', description: 'Moderators of this organization, including administrators' },
  { name: 'role:fullmembers', description: 'Members of this organization, not including new accounts and guests' },
  { name: 'role:members', description: 'Members of this organization, not including guests' },
  { name: 'role:everyone', description: 'Everyone in this organization, including guests' },
  { name: 'role:internet', description: 'Everyone on the internet' },
] as const;
export type SystemGroupName = (typeof SYSTEM_GROUPS)[number]['name'];

export const SYSTEM_GROUP_PARENT: Partial<Record<SystemGroupName, SystemGroupName>> = {
  'role:owners': 'role:administrators',
  'role:administrators': 'role:moderators',
  'role:moderators': 'role:fullmembers',
  'role:fullmembers': 'role:members',
  'role:members': 'role:everyone',
  'role:everyone': 'role:internet',
};
