import fc from 'fast-check';
import type { SchemaObject } from '../../../src/http/spec';
import { HUGE_INTEGERS, objectOf, parsesAsJson, Raw } from './json';
import { admittedTypes, type Decoding, type JsonType } from './model';
import { codePoints, ofLength, oddString, PROTOTYPE_KEYS } from './strings';

/** A value valid against the schema (types, enums, bounds); strings are odd but within their lengths. */
export function validValue(s: SchemaObject, depth = 0): fc.Arbitrary<unknown> {
  if (s.enum) return fc.constantFrom(...s.enum.filter((v) => v !== null));
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return fc.oneof(...branches.map((b) => validValue(b as SchemaObject, depth + 1)));
  switch (s.type) {
    case 'integer':
      return fc.integer({ min: s.minimum ?? 0, max: Math.min(s.maximum ?? 1000, (s.minimum ?? 0) + 1000) });
    case 'number':
      return fc.double({ min: s.minimum ?? 0, max: s.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'string':
      return boundedString(s);
    case 'array': {
      const items = validValue((s.items ?? {}) as SchemaObject, depth + 1);
      return fc.array(items, { minLength: s.minItems ?? 0, maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 3, 3)) });
    }
    case 'object':
      if (depth > 4) return fc.constant({});
      return validObject(s, depth);
    default:
      return fc.oneof(oddString, fc.integer({ min: 0, max: 100 }), fc.boolean());
  }
}

function boundedString(s: SchemaObject): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Infinity;
  return oddString.map((x) => {
    const cps = [...x];
    const cut = cps.length > max ? cps.slice(0, max).join('') : x;
    return codePoints(cut) < min ? ofLength(cut || 'x', min) : cut;
  });
}

function validObject(s: SchemaObject, depth: number): fc.Arbitrary<unknown> {
  const props = Object.entries(s.properties ?? {}) as Array<[string, SchemaObject]>;
  const required = new Set(s.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of props) model[k] = validValue(v, depth + 1);
  if (props.length === 0 && s.additionalProperties && typeof s.additionalProperties === 'object') {
    return fc.dictionary(fc.constantFrom('a', 'b', 'mobile'), validValue(s.additionalProperties as SchemaObject, depth + 1), {
      maxKeys: 2,
    });
  }
  return fc.record(model, { requiredKeys: [...required] });
}

/** One way a value can break its schema, named for the report. */
export interface Invalid {
  why: string;
  value: unknown;
}

const SAMPLES: Record<JsonType, unknown[]> = {
  integer: [7, -3],
  number: [1.5, -0.25],
  string: ['x', '7', 'true'],
  boolean: [true, false],
  array: [[], [1, 'x']],
  object: [{}, objectOf([['__proto__', 1]]), { toString: 'x' }],
  null: [null],
};

/**
 * Values certainly refused by a schema validator for this schema, as the
 * field's decoding delivers them (a raw field only ever holds text; a query
 * parameter is text the validator coerces). Null when no value can break it.
 */
export function invalidValue(s: SchemaObject, decoding: Decoding, depth = 0): fc.Arbitrary<Invalid> | null {
  const options: Array<fc.Arbitrary<Invalid>> = [];
  const types = admittedTypes(s);
  if (decoding === 'raw' || decoding === 'path') {
    // Text only: enum, lengths, patterns.
  } else if (decoding === 'query') {
    if (types && !types.has('string')) options.push(invalidQueryText(types));
  } else if (types) {
    const wrong = (Object.keys(SAMPLES) as JsonType[]).filter((t) => !types.has(t));
    // A JSON-or-raw field takes unparsable text as a string: only JSON values of other types break it.
    const candidates = wrong.flatMap((t) => SAMPLES[t]).filter((v) => !(decoding === 'json-or-raw' && typeof v === 'string'));
    if (candidates.length) {
      // Inside a JSON query parameter the validator coerces scalars (ajv coerceTypes): say so in the tag.
      const why = (v: unknown) => (decoding === 'query-json' && coercible(v, types) ? 'wrong type (coercible)' : 'wrong type');
      options.push(fc.constantFrom(...candidates).map((value) => ({ why: why(value), value })));
    }
  }
  if (s.enum) {
    const enumValues = new Set(s.enum.map(String));
    if (s.type === 'integer' || s.type === 'number') {
      const ints = fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.constantFrom(0, 401, 99)).filter((n) => !enumValues.has(String(n)));
      options.push(ints.map((value) => ({ why: 'outside the enum', value: decoding === 'query' ? String(value) : value })));
    } else {
      options.push(
        oddString
          .filter((x) => !enumValues.has(x) && !(decoding === 'json-or-raw' && parsesAsJson(x) && !isString(x)))
          .map((value) => ({ why: 'outside the enum', value })),
      );
    }
  }
  if (s.type === 'string' && !s.enum) {
    if (s.maxLength !== undefined) {
      const max = s.maxLength;
      options.push(
        fc
          .tuple(oddString, fc.integer({ min: 1, max: 20 }))
          .map(([unit, extra]) => ({ why: `longer than ${max}`, value: ofLength(unit, max + extra) })),
      );
    }
    if ((s.minLength ?? 0) >= 1) options.push(fc.constant({ why: 'shorter than minLength', value: '' }));
  }
  if ((s.type === 'integer' || s.type === 'number') && !s.enum) {
    const asText = (v: number | Raw) => (decoding === 'query' || decoding === 'path' ? String(v) : v);
    if (s.minimum !== undefined) {
      const min = s.minimum;
      options.push(
        fc
          .oneof(
            fc.integer({ min: min - 1000, max: min - 1 }).map((v) => asText(v)),
            fc.constantFrom(...HUGE_INTEGERS).map((h) => asText(new Raw('-' + h))),
          )
          .map((value) => ({ why: `below the minimum ${min}`, value })),
      );
    }
    if (s.maximum !== undefined) {
      const max = s.maximum;
      options.push(
        fc
          .oneof(
            fc.integer({ min: max + 1, max: max + 1000 }).map((v) => asText(v)),
            fc.constantFrom(...HUGE_INTEGERS).map((h) => asText(new Raw(h))),
          )
          .map((value) => ({ why: `above the maximum ${max}`, value })),
      );
    }
    if (s.type === 'integer' && decoding !== 'raw' && decoding !== 'path') {
      options.push(
        fc
          .constantFrom('1.5', '-0.5', '1e400', '-1e400')
          .map((t) => ({ why: 'not an integer', value: decoding === 'query' ? t : new Raw(t) })),
      );
    }
  }
  if (s.type === 'array' && decoding !== 'raw' && decoding !== 'path' && decoding !== 'query') {
    const item = validValue((s.items ?? {}) as SchemaObject, depth + 1);
    if (s.maxItems !== undefined) {
      const max = s.maxItems;
      options.push(fc.array(item, { minLength: max + 1, maxLength: max + 3 }).map((value) => ({ why: `more than ${max} items`, value })));
    }
    if ((s.minItems ?? 0) > 0) {
      const min = s.minItems!;
      options.push(fc.array(item, { maxLength: min - 1 }).map((value) => ({ why: `fewer than ${min} items`, value })));
    }
    const badItem = depth < 3 ? invalidValue((s.items ?? {}) as SchemaObject, nested(decoding), depth + 1) : null;
    if (badItem) {
      options.push(
        fc
          .tuple(fc.array(item, { maxLength: 2 }), badItem, fc.nat())
          .map(([items, bad, at]) => {
            const out = [...items];
            out.splice(at % (out.length + 1), 0, bad.value);
            return { why: `an item ${bad.why}`, value: s.maxItems !== undefined ? out.slice(-s.maxItems) : out };
          })
          .filter((x) => (x.value as unknown[]).length > 0),
      );
    }
  }
  if (s.type === 'object' && decoding !== 'raw' && decoding !== 'path' && decoding !== 'query' && depth < 4) {
    const props = Object.entries(s.properties ?? {}) as Array<[string, SchemaObject]>;
    const base = validObject(s, depth) as fc.Arbitrary<Record<string, unknown>>;
    for (const name of s.required ?? []) {
      options.push(base.map((o) => ({ why: `without ${name}`, value: objectOf(Object.entries(o).filter(([k]) => k !== name)) })));
    }
    if (s.additionalProperties === false) {
      options.push(
        fc.tuple(base, fc.constantFrom(...PROTOTYPE_KEYS, 'extra', 'x-fuzz')).map(([o, k]) => ({
          why: `with an unexpected key ${k}`,
          value: objectOf([...Object.entries(o), [k, 1]]),
        })),
      );
    } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      const bad = invalidValue(s.additionalProperties as SchemaObject, nested(decoding), depth + 1);
      if (bad) {
        options.push(
          fc
            .tuple(fc.constantFrom('mobile', ...PROTOTYPE_KEYS), bad)
            .map(([k, b]) => ({ why: `${k} ${b.why}`, value: objectOf([[k, b.value]]) })),
        );
      }
    }
    for (const [name, prop] of props) {
      const bad = invalidValue(prop, nested(decoding), depth + 1);
      if (!bad) continue;
      options.push(
        fc.tuple(base, bad).map(([o, b]) => ({
          why: `${name} ${b.why}`,
          value: objectOf([...Object.entries(o).filter(([k]) => k !== name), [name, b.value]]),
        })),
      );
    }
  }
  if (options.length === 0) return null;
  return fc.oneof(...options);
}

const isString = (x: string) => typeof JSON.parse(x) === 'string';

/** Values inside a JSON value are JSON; inside a JSON query parameter they are still subject to coercion. */
const nested = (decoding: Decoding): Decoding => (decoding === 'query-json' ? 'query-json' : 'json');

/** Whether ajv's coerceTypes turns this value into one of these types (its documented scalar rules). */
function coercible(v: unknown, types: Set<JsonType>): boolean {
  const numeric = typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v));
  if ((types.has('number') || types.has('integer')) && (numeric || typeof v === 'boolean' || v === null)) {
    return types.has('number') || v === null || typeof v === 'boolean' || Number.isInteger(Number(v));
  }
  if (types.has('string') && (typeof v === 'number' || typeof v === 'boolean' || v === null)) return true;
  if (types.has('boolean') && (v === 'true' || v === 'false' || v === 0 || v === 1 || v === null)) return true;
  if (types.has('null') && (v === '' || v === 0 || v === false)) return true;
  return false;
}

/** Text the validator cannot coerce to any of these types (coercion accepts ' 1', '0x10', '1e3' as numbers). */
function invalidQueryText(types: Set<JsonType>): fc.Arbitrary<Invalid> {
  const refused = (t: string) => {
    const n = Number(t);
    const numeric = t.trim() !== '' && !Number.isNaN(n);
    if (types.has('number') && numeric) return false;
    if (types.has('integer') && numeric && Number.isInteger(n)) return false;
    if (types.has('boolean') && (t === 'true' || t === 'false')) return false;
    if (types.has('null') && (t === '' || t === 'null')) return false;
    return true;
  };
  return fc
    .oneof(fc.constantFrom('abc', '1.5', '', 'yes', '[]', '{}', 'null', '2', 'True', '--1'), oddString)
    .filter(refused)
    .map((value) => ({ why: 'wrong type', value }));
}
