import fc from 'fast-check';

/**
 * Text that has broken servers before: odd Unicode (bidirectional marks, NUL,
 * lone surrogates, combining marks, emoji sequences, BOM, line separators),
 * injection-looking strings, and the names of Object.prototype's members.
 */
export const ODD_UNICODE = [
  '\u202e',
  '\u200f',
  '\u200b',
  '\u0000',
  '\u0007',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\u2028',
  '\u00ad',
  'e\u0301',
  '😀',
  '👩‍👩‍👧',
  '🏳️‍🌈',
  '𝕏',
  'ﷺ',
  'İ',
  'ß',
  'Ⅻ',
  '\uffff',
  '\r\n',
  '\t',
] as const;

export const INJECTION = [
  "' OR 1=1 --",
  "'; DROP TABLE users; --",
  "O'Brien",
  "' UNION SELECT 1 --",
  "\\'",
  "'||'",
  '" OR ""="',
  '`id`',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  '#{7*7}',
  '%s%s%n',
  '../../../etc/passwd',
  '\\',
  '$(id)',
  'NULL',
  'undefined',
  'NaN',
  '%00',
  '%',
  '*',
  '_',
  'LIKE %',
  '+x* -y "z"',
  '@@version',
] as const;

export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  'isPrototypeOf',
] as const;

const word = fc.constantFrom('general', 'greetings', 'hello', 'design', 'Test', 'a', 'x y', 'ünïcödé');

/** A short string mixing plain words with the above. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: word, weight: 2 },
  { arbitrary: fc.constantFrom(...ODD_UNICODE), weight: 2 },
  { arbitrary: fc.constantFrom(...INJECTION), weight: 2 },
  { arbitrary: fc.constantFrom(...PROTOTYPE_KEYS), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 },
  {
    arbitrary: fc
      .array(fc.oneof(word, fc.constantFrom(...ODD_UNICODE, ...INJECTION, ...PROTOTYPE_KEYS)), { minLength: 2, maxLength: 4 })
      .map((parts) => parts.join('')),
    weight: 2,
  },
);

/**
 * Text for lookups by name (channels, users, queues, flags, operators): mostly
 * injection-looking strings and Object.prototype's member names, the inputs
 * such lookups get wrong.
 */
export const nameLike: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...INJECTION), weight: 4 },
  { arbitrary: fc.constantFrom(...PROTOTYPE_KEYS), weight: 3 },
  { arbitrary: oddString, weight: 3 },
);

/** Length in code points, as JSON Schema's maxLength counts (and ajv). */
export const codePoints = (s: string) => [...s].length;

/** A string of exactly `n` code points, built from `unit` repeated (and cut). */
export function ofLength(unit: string, n: number): string {
  const units = [...(unit || 'x')];
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) out.push(units[i % units.length]!);
  return out.join('');
}
