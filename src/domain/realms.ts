import { ApiError } from '../errors';

/** Zulip's Realm.MAX_REALM_SUBDOMAIN_LENGTH, MAX_REALM_NAME_LENGTH and MAX_REALM_DESCRIPTION_LENGTH. */
export const MAX_REALM_SUBDOMAIN_LENGTH = 40;
export const MIN_REALM_SUBDOMAIN_LENGTH = 3;
export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/**
 * A new organization's subdomain (string id), by Zulip's rules and in their
 * order (check_subdomain_available), with Zulip's messages: "" is the root
 * organization; any other is 3 to 40 lowercase letters, digits and dashes,
 * not starting or ending with a dash, so that it is one label of a host name
 * (src/domain/realm-address.ts). Whether it is taken is the action's to check.
 */
export function checkRealmStringId(stringId: string): string {
  if (stringId === '') return stringId;
  if (stringId.length > MAX_REALM_SUBDOMAIN_LENGTH) {
    throw new ApiError(`Subdomain may have at most ${MAX_REALM_SUBDOMAIN_LENGTH} characters.`);
  }
  if (stringId.startsWith('-') || stringId.endsWith('-')) throw new ApiError("Subdomain cannot start or end with a '-'.");
  if (!/^[a-z0-9-]*$/.test(stringId)) throw new ApiError("Subdomain can only have lowercase letters, numbers, and '-'s.");
  if (stringId.length < MIN_REALM_SUBDOMAIN_LENGTH) {
    throw new ApiError(`Subdomain needs to have length ${MIN_REALM_SUBDOMAIN_LENGTH} or greater.`);
  }
  return stringId;
}

/** An organization's name, trimmed: not empty, at most 40 characters. */
export function checkRealmName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw new ApiError("Organization name can't be empty.");
  if ([...name].length > MAX_REALM_NAME_LENGTH) throw new ApiError('Organization name is too long.');
  return name;
}

/** An organization's description (Markdown): at most 1000 characters. */
export function checkRealmDescription(description: string): string {
  if ([...description].length > MAX_REALM_DESCRIPTION_LENGTH) throw new ApiError('Organization description is too long.');
  return description;
}
