import { ApiError } from '../errors';
import type { Payload } from './payload';

/**
 * Zulip's integrations are Python: the values they interpolate into their
 * messages print as Python prints them (None, True, 1e-05, ['a', 'b']), and
 * their timestamps go through datetime.fromisoformat. These functions print
 * JSON values the same way, so the messages match byte for byte.
 */

/** Python's str() of a JSON value: strings as they are, everything else as repr() shows it. */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** Python's repr() of a JSON value (what str() of a list or a dict shows for each element). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const items = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pyStringRepr(k)}: ${pyRepr(v)}`);
    return `{${items.join(', ')}}`;
  }
  return String(value);
}

/**
 * A JSON number as Python prints it once json.loads has read it: an integer
 * as its digits; a float in its shortest form, in exponent notation below
 * 1e-4 or from 1e16 on, with a two-digit exponent (1e-05, 1.5e+16). A float
 * with an integral value (100.0 in the JSON) reads here as the integer 100;
 * the services sending these never write one.
 */
export function pyNumber(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? BigInt(n).toString() : pyExponent(n);
  const magnitude = Math.abs(n);
  return magnitude < 1e-4 || magnitude >= 1e16 ? pyExponent(n) : String(n);
}

function pyExponent(n: number): string {
  const [mantissa, exponent] = n.toExponential().split('e');
  const sign = exponent.startsWith('-') ? '-' : '+';
  return `${mantissa}e${sign}${exponent.replace(/^[+-]/, '').padStart(2, '0')}`;
}

/** Python's repr() of a string: single quotes unless the text holds one and no double quote. */
function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return quote + out + quote;
}

// datetime.fromisoformat's extended format: a date, optionally a time (the
// fraction may be longer than microseconds, as Go writes it) and an offset.
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * Zulip's global time for an ISO 8601 timestamp the service sent:
 * `<time:2024-03-01T02:09:00+00:00>`, read with datetime.fromisoformat and
 * printed to the second in the offset it was written in (the fraction is
 * dropped, "Z" becomes "+00:00"; each reader sees it in their own zone).
 */
export function globalTime(field: Payload): string {
  const m = ISO_DATETIME.exec(field.str());
  if (!m) throw new ApiError(`${field.path} is not a valid date`);
  const [, year, month, day, hour = '00', minute = '00', second = '00', zone] = m;
  if (+month < 1 || +month > 12 || +day < 1 || +day > 31 || +hour > 23 || +minute > 59 || +second > 59) {
    throw new ApiError(`${field.path} is not a valid date`);
  }
  return `<time:${year}-${month}-${day}T${hour}:${minute}:${second}${isoOffset(zone)}>`;
}

function isoOffset(zone: string | undefined): string {
  if (zone === undefined) return '';
  if (zone === 'Z') return '+00:00';
  const digits = zone.slice(1).replace(':', '');
  return `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
}

/**
 * Zulip's global time for a Unix timestamp in seconds, read in UTC the way
 * datetime.fromtimestamp does (to the microsecond) and printed to the second.
 */
export function globalTimeFromSeconds(seconds: number): string {
  const whole = Math.floor(Math.round(seconds * 1e6) / 1e6);
  return `<time:${new Date(whole * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;
}

/** Python's `key in payload`: the key is there, whatever its value (null included). */
export function pyIn(p: Payload, key: string): boolean {
  return p.isObject() && Object.prototype.hasOwnProperty.call(p.raw, key);
}

/** Python's truthiness of a JSON value: null, false, 0, "" and empty lists and objects are false. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}
