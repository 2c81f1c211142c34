import { ApiError } from '../errors';

/** Zulip's NamedUserGroup.MAX_NAME_LENGTH. */
export const USER_GROUP_NAME_MAX_LENGTH = 100;

/**
 * Prefixes a group name may not start with (Zulip's INVALID_NAME_PREFIXES):
 * '@' would read as a mention, 'role:' is the system groups' namespace, and
 * the others are kept for the same kind of reference to users and channels.
 */
export const INVALID_USER_GROUP_NAME_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'] as const;

/**
 * A new or changed group name, checked in Zulip's order: blank, too long,
 * reserved prefix. The name is kept as given (Zulip does not strip it).
 */
export function checkUserGroupName(name: string): string {
  if (name.trim() === '') throw new ApiError("User group name can't be empty!");
  if (name.length > USER_GROUP_NAME_MAX_LENGTH) {
    throw new ApiError(`User group name cannot exceed ${USER_GROUP_NAME_MAX_LENGTH} characters.`);
  }
  for (const prefix of INVALID_USER_GROUP_NAME_PREFIXES) {
    if (name.startsWith(prefix)) throw new ApiError(`User group name cannot start with '${prefix}'.`);
  }
  return name;
}
