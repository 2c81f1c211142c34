/**
 * A token written into JSON text or a URL exactly as given: numbers a JS
 * number cannot hold (1e400, 2^53+1, hundreds of digits), malformed percent
 * escapes, text that is not JSON.
 */
export class Raw {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** JSON text of a value that may hold Raw tokens (kept verbatim) and own `__proto__` keys. */
export function toJsonText(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJsonText).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .map((k) => `${JSON.stringify(k)}:${toJsonText((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return v === undefined ? 'null' : JSON.stringify(v);
}

/** An object with these own keys, `__proto__` included (a literal would set the prototype instead). */
export function objectOf(entries: Array<[string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Whether the text parses as JSON (what the server's decoding tries first). */
export function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Integers no JS number holds exactly, or at all. */
export const HUGE_INTEGERS = [
  '9007199254740993', // 2^53 + 1
  '18446744073709551616', // 2^64
  '1' + '0'.repeat(40),
  '9'.repeat(300),
] as const;
