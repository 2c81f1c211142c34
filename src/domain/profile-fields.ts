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
