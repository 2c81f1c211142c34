import { ApiError } from '../errors';

/** Zulip's custom profile field type codes. */
export const FieldType = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;
export type FieldTypeCode = (typeof FieldType)[keyof typeof FieldType];

export interface ProfileFieldDef {
  id: number;
  name: string;
  field_type: number;
  /** JSON text; for a select field `{"<key>": {"text": ..., "order": ...}, ...}`. */
  field_data: string;
  /** Whether users who are not administrators may set their own value (Zulip's editable_by_user). */
  editable_by_user: boolean;
}

/** A checked value: text to store as is, or user IDs (stored as JSON text, checked against the realm by the caller). */
export type CheckedProfileValue = { kind: 'text'; value: string } | { kind: 'users'; ids: number[] };

// Zulip's check_short_string / check_long_string caps.
const SHORT_LIMIT = 50;
const LONG_LIMIT = 500;

/** Fields whose values are Markdown: Zulip renders them and sends rendered_value. */
export const isRenderable = (fieldType: number) => fieldType === FieldType.SHORT_TEXT || fieldType === FieldType.LONG_TEXT;

/**
 * Zulip treats null, "" and [] alike in profile_data: the value is removed
 * (update_user_backend's `value is None or not value`).
 */
export const isClearingValue = (value: string | number[] | null): value is null | '' | [] =>
  value === null || value === '' || value.length === 0;

/**
 * Checks a non-empty value against its field's type, with Zulip's messages
 * (zerver/lib/validator.py), which name the field by its display name.
 */
export function checkProfileValue(field: ProfileFieldDef, value: string | number[]): CheckedProfileValue {
  const name = field.name;
  if (field.field_type === FieldType.USER) {
    if (!Array.isArray(value)) throw new ApiError('User IDs is not a list');
    for (const [i, id] of value.entries()) if (!Number.isInteger(id)) throw new ApiError(`User IDs[${i}] is not an integer`);
    return { kind: 'users', ids: [...new Set(value)] };
  }
  if (typeof value !== 'string') throw new ApiError(`${name} is not a string`);
  switch (field.field_type) {
    case FieldType.LONG_TEXT:
      return capped(name, value, LONG_LIMIT);
    case FieldType.SELECT: {
      const options = parseFieldData(field.field_data);
      if (!Object.hasOwn(options, value)) throw new ApiError(`'${value}' is not a valid choice for '${name}'.`);
      return { kind: 'text', value };
    }
    case FieldType.DATE:
      if (!isIsoDate(value)) throw new ApiError(`${name} is not a date`);
      return { kind: 'text', value };
    case FieldType.URL:
      if (!isUrl(value)) throw new ApiError(`${name} is not a URL`);
      return { kind: 'text', value };
    default:
      // short text, external account and pronouns are short strings.
      return capped(name, value, SHORT_LIMIT);
  }
}

function capped(name: string, value: string, limit: number): CheckedProfileValue {
  if ([...value].length > limit) throw new ApiError(`${name} is too long (limit: ${limit} characters)`);
  return { kind: 'text', value };
}

/** A field's `field_data`: JSON whose keys depend on the field's type (choices, an external account's kind). */
type FieldData = Record<string, unknown>;

function parseFieldData(raw: string): FieldData {
  try {
    const data = JSON.parse(raw) as unknown;
    return data && typeof data === 'object' && !Array.isArray(data) ? (data as FieldData) : {};
  } catch {
    return {};
  }
}

/** YYYY-MM-DD naming a real day (Zulip round-trips it through strptime/strftime). */
function isIsoDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

/** Django's URLValidator accepts http(s) and ftp(s) URLs with a host. */
function isUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    if (!['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol)) return false;
    return url.hostname.includes('.') || url.hostname === 'localhost';
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// Field definitions: what an administrator may create and change.
// ---------------------------------------------------------------------------

/** Zulip's CustomProfileField limits. */
export const FIELD_NAME_MAX_LENGTH = 40;
export const FIELD_HINT_MAX_LENGTH = 80;
/** At most this many fields carry display_in_profile_summary (Zulip's MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS). */
export const MAX_SUMMARY_FIELDS = 2;

const ALL_FIELD_TYPES = new Set<number>(Object.values(FieldType));

/** A known external account kind: the label a field of it gets, and its site. */
export interface ExternalAccountKind {
  /** The site's name, as offered to administrators. */
  text: string;
  /** The label of a field of this kind (Zulip takes it from here, not from the request). */
  name: string;
  hint: string;
  /** The profile URL, `%(username)s` standing for the value (Zulip's pattern syntax). */
  url_pattern: string;
}

const account = (text: string, url: string): ExternalAccountKind => ({ text, name: `${text} account`, hint: '', url_pattern: url });

/**
 * The external account kinds an administrator picks by name (field_data
 * `{"subtype": "<key>"}`); any other site is `custom`, with its own
 * url_pattern. POST /register lists them as realm_default_external_accounts.
 */
export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<Record<string, ExternalAccountKind>> = {
  bitbucket: account('Bitbucket', 'https://bitbucket.org/%(username)s'),
  bluesky: account('Bluesky', 'https://bsky.app/profile/%(username)s'),
  codeberg: account('Codeberg', 'https://codeberg.org/%(username)s'),
  github: account('GitHub', 'https://github.com/%(username)s'),
  gitlab: account('GitLab', 'https://gitlab.com/%(username)s'),
  linkedin: account('LinkedIn', 'https://www.linkedin.com/in/%(username)s'),
  // The value is the whole profile URL: Mastodon accounts live on many servers.
  mastodon: account('Mastodon', '%(username)s'),
  twitter: account('Twitter', 'https://twitter.com/%(username)s'),
  x: account('X', 'https://x.com/%(username)s'),
};

/** field_data as a request sends it: each entry a string or an object of strings (Zulip's check_profile_field_data). */
export type FieldDataInput = Record<string, unknown>;

/** The first check of any field_data sent, before the field's type is looked at. */
export function checkFieldDataShape(data: FieldDataInput): void {
  for (const [key, entry] of Object.entries(data)) {
    const ok = typeof entry === 'string' || (isPlainObject(entry) && Object.values(entry).every((v) => typeof v === 'string'));
    if (!ok) throw new ApiError(`field_data["${key}"] is not an allowed_type`);
  }
}

/** A default external account kind's field (Zulip fills its label and hint in itself). */
export function defaultExternalAccount(fieldType: number, data: FieldDataInput): ExternalAccountKind | null {
  if (fieldType !== FieldType.EXTERNAL_ACCOUNT) return null;
  const subtype = data.subtype;
  return typeof subtype === 'string' && Object.hasOwn(DEFAULT_EXTERNAL_ACCOUNTS, subtype) ? DEFAULT_EXTERNAL_ACCOUNTS[subtype]! : null;
}

export interface FieldDefinition {
  name: string;
  hint: string;
  fieldType: number;
  fieldData: FieldDataInput;
  displayInProfileSummary: boolean;
  useForUserMatching: boolean;
}

/**
 * Zulip's validate_custom_profile_field, in its order: the type's
 * field_data, then the label and hint (not for a default external account,
 * whose label and hint are the kind's), then the type itself, then whether
 * the type may be shown in the profile summary.
 */
/** The field types whose values clients may match users by (Zulip's use_for_user_matching, level 455). */
const USER_MATCHING_TYPES: ReadonlySet<number> = new Set([FieldType.SHORT_TEXT, FieldType.EXTERNAL_ACCOUNT]);

export function checkFieldDefinition(d: FieldDefinition): void {
  if (d.fieldType === FieldType.SELECT) checkChoices(d.fieldData);
  else if (d.fieldType === FieldType.EXTERNAL_ACCOUNT) checkExternalAccountData(d.fieldData);
  if (!defaultExternalAccount(d.fieldType, d.fieldData)) {
    if (d.name.trim() === '') throw new ApiError('Label cannot be blank.');
    // The hint is checked before the label, as Zulip does.
    if ([...d.hint].length > FIELD_HINT_MAX_LENGTH) throw new ApiError(`hint is too long (limit: ${FIELD_HINT_MAX_LENGTH} characters)`);
    if ([...d.name].length > FIELD_NAME_MAX_LENGTH) throw new ApiError(`name is too long (limit: ${FIELD_NAME_MAX_LENGTH} characters)`);
  }
  if (!ALL_FIELD_TYPES.has(d.fieldType)) throw new ApiError('Invalid field type.');
  // Feature level 455: typeahead matches users by a short text or external account value only.
  if (d.useForUserMatching && !USER_MATCHING_TYPES.has(d.fieldType)) {
    throw new ApiError('Field type not supported for user matching.');
  }
  // Since feature level 476 only a Users field is refused (long text may be shown).
  if (d.displayInProfileSummary && d.fieldType === FieldType.USER) {
    throw new ApiError('Field type not supported for display in profile summary.');
  }
}

/** A list-of-options field: at least one choice, each `{text, order}` with non-blank strings, no two texts alike. */
function checkChoices(data: FieldDataInput): void {
  const entries = Object.entries(data);
  if (entries.length === 0) throw new ApiError('Field must have at least one choice.');
  const texts = new Set<string>();
  for (const [key, choice] of entries) {
    if (key.trim() === '') throw new ApiError("'value' cannot be blank.");
    const c = checkObjectOnly(choice, ['text', 'order'], []);
    texts.add(c.text as string);
  }
  if (texts.size !== entries.length) throw new ApiError('Field must not have duplicate choices.');
}

/** An external account field: a subtype, and a url_pattern for a `custom` one. */
function checkExternalAccountData(data: FieldDataInput): void {
  checkObjectOnly(data, ['subtype'], ['url_pattern']);
  const subtype = data.subtype as string;
  if (Object.hasOwn(DEFAULT_EXTERNAL_ACCOUNTS, subtype)) return;
  if (subtype !== 'custom') throw new ApiError('Invalid external account type');
  if (!Object.hasOwn(data, 'url_pattern')) throw new ApiError('Custom external account must define URL pattern');
}

/**
 * Zulip's check_dict_only over `field_data`: an object with the required
 * keys (non-blank strings), the optional ones, and no others. The only
 * optional key there is, url_pattern, must hold `%(username)s` exactly once
 * and make a URL.
 */
function checkObjectOnly(value: unknown, required: string[], optional: string[]): Record<string, unknown> {
  if (!isPlainObject(value)) throw new ApiError('field_data is not a dict');
  for (const key of required) {
    if (!Object.hasOwn(value, key)) throw new ApiError(`${key} key is missing from field_data`);
    const v = value[key];
    if (typeof v !== 'string') throw new ApiError(`field_data["${key}"] is not a string`);
    if (v.trim() === '') throw new ApiError(`field_data["${key}"] cannot be blank.`);
  }
  for (const key of optional) {
    if (!Object.hasOwn(value, key)) continue;
    const v = value[key];
    if (typeof v !== 'string') throw new ApiError(`field_data["${key}"] is not a string`);
    if (v.split('%(username)s').length !== 2) throw new ApiError("URL pattern must contain '%(username)s'.");
    if (!isUrl(v.replace('%(username)s', 'username'))) throw new ApiError(`field_data["${key}"] is not a URL`);
  }
  const unexpected = Object.keys(value).filter((k) => !required.includes(k) && !optional.includes(k));
  if (unexpected.length > 0) throw new ApiError(`Unexpected arguments: ${unexpected.join(', ')}`);
  return value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The field_data a field stores: JSON for the two types that have any, the empty string otherwise (as Zulip). */
export function storedFieldData(fieldType: number, data: FieldDataInput | null): string | null {
  if (fieldType !== FieldType.SELECT && fieldType !== FieldType.EXTERNAL_ACCOUNT) return null;
  return data === null ? null : JSON.stringify(data);
}

/** The choice keys of a stored list-of-options field. */
export function choiceKeys(storedData: string): string[] {
  return Object.keys(parseFieldData(storedData));
}

/** A stored field_data as an object (the empty string, or anything unreadable, as `{}`). */
export function parsedFieldData(storedData: string): FieldDataInput {
  return parseFieldData(storedData);
}

/** Refused when a user without administration rights changes a field administrators keep to themselves. */
export const notEditableByUser = () => new ApiError('You are not allowed to change this field. Contact an administrator to update it.');
