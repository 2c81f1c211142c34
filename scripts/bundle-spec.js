#!/usr/bin/env node
// Validates the split OpenAPI document and writes two build artefacts:
//   dist/openapi.bundled.json      one file, internal $refs (served to EOV)
//   dist/openapi.dereferenced.json no $refs at all (dredd's parser needs this)
// With --validate-only nothing is written.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const SwaggerParser = require('@apidevtools/swagger-parser');

async function main() {
  const root = path.join(__dirname, '..', 'openapi', 'openapi.yaml');
  const validateOnly = process.argv.includes('--validate-only');
  await SwaggerParser.validate(root);
  const bundled = await SwaggerParser.bundle(root);
  const ops = countOperations(bundled);
  const unbounded = unboundedRequestValues(await SwaggerParser.dereference(structuredClone(bundled)));
  if (unbounded.length) {
    throw new Error(
      `request values without bounds (integers need minimum and maximum or an enum; arrays need maxItems):\n  ${unbounded.join('\n  ')}`,
    );
  }
  if (validateOnly) {
    console.log(`openapi: valid (${ops} operations)`);
    return;
  }
  const deref = await SwaggerParser.dereference(structuredClone(bundled));
  const out = path.join(__dirname, '..', 'dist');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'openapi.bundled.json'), JSON.stringify(bundled, null, 1));
  fs.writeFileSync(path.join(out, 'openapi.dereferenced.json'), JSON.stringify(deref, null, 1));
  console.log(`openapi: valid (${ops} operations), bundled into dist/`);
}

/**
 * Every integer a client can send has a range and every list a length limit,
 * so the validator refuses huge numbers and unbounded lists before any query
 * runs, and clients see the limits in the contract.
 */
function unboundedRequestValues(doc) {
  const out = [];
  const walk = (schema, where, seen) => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    if (schema.type === 'integer' && !schema.enum && (schema.minimum === undefined || schema.maximum === undefined)) out.push(where);
    if (schema.type === 'array' && schema.maxItems === undefined) out.push(where);
    for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, `${where}.${k}`, seen);
    if (schema.items) walk(schema.items, `${where}[]`, seen);
    for (const b of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) walk(b, where, seen);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
      walk(schema.additionalProperties, `${where}{}`, seen);
  };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const m of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[m];
      if (!op) continue;
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        walk(p.schema ?? p.content?.['application/json']?.schema, `${op.operationId} ${p.in} ${p.name}`, new Set());
      }
      for (const media of Object.values(op.requestBody?.content ?? {})) {
        for (const [k, v] of Object.entries(media.schema?.properties ?? {})) walk(v, `${op.operationId} body ${k}`, new Set());
      }
    }
  }
  return [...new Set(out)];
}

function countOperations(doc) {
  let n = 0;
  for (const item of Object.values(doc.paths ?? {})) for (const m of ['get', 'post', 'put', 'patch', 'delete']) if (item[m]) n++;
  return n;
}

main().catch((err) => {
  console.error(`openapi: INVALID: ${err.message}`);
  process.exit(1);
});
