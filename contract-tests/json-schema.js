'use strict';
/**
 * OpenAPI 3.0 schema → JSON Schema draft-07 for dredd's validator (gavel):
 * `nullable` becomes a null branch; OpenAPI-only keywords are dropped.
 */
const DROP = new Set(['example', 'examples', 'deprecated', 'xml', 'externalDocs', 'discriminator', 'readOnly', 'writeOnly']);

function convert(schema) {
  if (Array.isArray(schema)) return schema.map(convert);
  if (!schema || typeof schema !== 'object') return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (DROP.has(k) || k.startsWith('x-') || k === 'nullable') continue;
    if (k === 'properties' || k === 'patternProperties') {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, convert(s)]));
    } else {
      out[k] = convert(v);
    }
  }
  if (schema.nullable) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (!out.type && !out.enum) return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

exports.toJsonSchema = (schema) => ({ $schema: 'http://json-schema.org/draft-07/schema#', ...convert(schema) });
