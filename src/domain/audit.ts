/**
 * Audit log event types. The numbers are Zulip's (its AuditLogEventType), so
 * a row reads the same to anyone who knows Zulip's audit log; only the types
 * Parley writes today are listed. Zulip has no type for two changes Parley
 * records; those use numbers from 30000 up, far from every range Zulip uses,
 * so a later Zulip type cannot collide with them.
 */
export const AuditEventType = {
  USER_CREATED: 101,
  USER_DEACTIVATED: 103,
  USER_REACTIVATED: 104,
  USER_ROLE_CHANGED: 105,
  USER_SOFT_ACTIVATED: 120,
  USER_SOFT_DEACTIVATED: 121,
  USER_PASSWORD_CHANGED: 122,
  USER_BOT_OWNER_CHANGED: 123,
  USER_FULL_NAME_CHANGED: 124,
  USER_EMAIL_CHANGED: 125,
  USER_API_KEY_CHANGED: 127,
  USER_DEFAULT_SENDING_STREAM_CHANGED: 129,
  USER_DEFAULT_REGISTER_STREAM_CHANGED: 130,
  USER_DEFAULT_ALL_PUBLIC_STREAMS_CHANGED: 131,
  USER_SETTING_CHANGED: 132,

  REALM_LOGO_CHANGED: 205,
  REALM_PROPERTY_CHANGED: 207,
  REALM_ICON_SOURCE_CHANGED: 208,
  REALM_CREATED: 215,
  REALM_DEFAULT_USER_SETTINGS_CHANGED: 216,
  REALM_DOMAIN_ADDED: 218,
  REALM_DOMAIN_CHANGED: 219,
  REALM_DOMAIN_REMOVED: 220,
  REALM_PLAYGROUND_ADDED: 221,
  REALM_PLAYGROUND_REMOVED: 222,
  REALM_LINKIFIER_ADDED: 223,
  REALM_LINKIFIER_CHANGED: 224,
  REALM_LINKIFIER_REMOVED: 225,
  REALM_LINKIFIERS_REORDERED: 228,

  SUBSCRIPTION_CREATED: 301,
  SUBSCRIPTION_ACTIVATED: 302,
  SUBSCRIPTION_DEACTIVATED: 303,

  USER_MUTED: 350,
  USER_UNMUTED: 351,

  CHANNEL_CREATED: 601,
  CHANNEL_DEACTIVATED: 602,
  CHANNEL_NAME_CHANGED: 603,
  CHANNEL_REACTIVATED: 604,
  CHANNEL_MESSAGE_RETENTION_DAYS_CHANGED: 605,
  CHANNEL_PROPERTY_CHANGED: 607,
  CHANNEL_GROUP_BASED_SETTING_CHANGED: 608,
  CHANNEL_FOLDER_CHANGED: 609,

  USER_GROUP_CREATED: 701,
  USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED: 703,
  USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED: 704,
  USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED: 705,
  USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_REMOVED: 706,
  USER_GROUP_DIRECT_SUPERGROUP_MEMBERSHIP_ADDED: 707,
  USER_GROUP_DIRECT_SUPERGROUP_MEMBERSHIP_REMOVED: 708,
  USER_GROUP_NAME_CHANGED: 720,
  USER_GROUP_DESCRIPTION_CHANGED: 721,
  USER_GROUP_GROUP_BASED_SETTING_CHANGED: 722,
  USER_GROUP_DEACTIVATED: 723,
  USER_GROUP_REACTIVATED: 724,

  SAVED_SNIPPET_CREATED: 800,

  // Parley only.
  USER_CUSTOM_PROFILE_DATA_CHANGED: 30001,
  MULTIUSE_INVITE_CREATED: 30002,
  // Custom profile field definitions (Parley only: Zulip logs none of these changes).
  CUSTOM_PROFILE_FIELD_CREATED: 30101,
  CUSTOM_PROFILE_FIELD_UPDATED: 30102,
  CUSTOM_PROFILE_FIELD_DELETED: 30103,
  CUSTOM_PROFILE_FIELDS_REORDERED: 30104,
} as const;
export type AuditEventTypeCode = (typeof AuditEventType)[keyof typeof AuditEventType];

const NAMES = new Map<number, string>(Object.entries(AuditEventType).map(([name, code]) => [code, name]));

/** The constant's name for a stored code ("UNKNOWN_<n>" for a code this version does not know). */
export function auditEventTypeName(code: number): string {
  return NAMES.get(code) ?? `UNKNOWN_${code}`;
}

/** One audit row, as actions describe it (the query layer adds the time and encodes extra as JSON). */
export interface AuditEntry {
  realmId: number;
  /** Who made the change; null for the command line, the system, or a sign-up through an invitation link. */
  actorId: number | null;
  eventType: AuditEventTypeCode;
  userId?: number | null;
  channelId?: number | null;
  groupId?: number | null;
  extra?: AuditExtra | null;
}

/**
 * extra_data: JSON details whose keys depend on the event type (a change's
 * values, an invitation's role, …); stored as text, shown by `parley audit-log`.
 */
export type AuditExtra = Record<string, unknown>;

/** extra_data of a change (valueChange). */
export type ValueChange = { old_value: unknown; new_value: unknown; property?: string };

/**
 * extra_data of a change: old_value, new_value and, where the row is one of
 * several settings, property. Zulip's conventions (it stores the two values
 * under the keys "1" and "2", its OLD_VALUE and NEW_VALUE; Parley spells them
 * out so the JSON reads without a key table).
 */
export function valueChange(oldValue: unknown, newValue: unknown, property?: string): ValueChange {
  const out: ValueChange = { old_value: oldValue ?? null, new_value: newValue ?? null };
  if (property !== undefined) out.property = property;
  return out;
}
