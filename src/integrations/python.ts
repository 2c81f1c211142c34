import type { Payload } from './payload';

/**
 * Zulip's integrations test payloads the Python way; these give the same
 * answers for a Payload.
 */

/** `key in dict`: present, whatever its value (null included). */
export function hasKey(p: Payload, key: string): boolean {
  return p.isObject() && Object.prototype.hasOwnProperty.call(p.raw, key);
}

/** Truthiness of an optional field: absent, null, "", 0, false, [] and {} are all false (then null). */
export function truthy(p: Payload | null): Payload | null {
  if (p === null) return null;
  const v = p.raw;
  if (v === '' || v === 0 || v === false) return null;
  if (Array.isArray(v)) return v.length === 0 ? null : p;
  if (typeof v === 'object' && v !== null && Object.keys(v).length === 0) return null;
  return p;
}
