#!/usr/bin/env node
// Validates the split OpenAPI document and writes two build artefacts:
//   dist/openapi.bundled.json      one file; every shared schema, parameter and
//                                  response under components with its own name
//                                  (served to clients and SDK generators)
//   dist/openapi.dereferenced.json no $refs at all (dredd's parser needs this)
// With --validate-only nothing is written.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
// make run bundles the contract before it builds: this script may use production
// dependencies only (swagger-parser here, @redocly/openapi-core below; package.json).
const SwaggerParser = require('@apidevtools/swagger-parser');

async function main() {
  const root = path.join(__dirname, '..', 'openapi', 'openapi.yaml');
  const validateOnly = process.argv.includes('--validate-only');
  await SwaggerParser.validate(root);
  const bundled = await bundleWithComponents(root);
  // The one-file document must itself be a valid contract, not only its sources.
  await SwaggerParser.validate(structuredClone(bundled));
  const misplaced = refsOutsideComponents(bundled);
  if (misplaced.length) throw new Error(`$refs that do not point into components:\n  ${misplaced.join('\n  ')}`);
  const ops = countOperations(bundled);
  const deref = await SwaggerParser.dereference(structuredClone(bundled));
  // Once every use is inlined, the named schemas, parameters and responses are
  // dead weight: dredd's parser would read each of them a second time.
  deref.components = { securitySchemes: deref.components?.securitySchemes };
  const unbounded = unboundedRequestValues(deref);
  if (unbounded.length) {
    throw new Error(
      `request values without bounds (integers need minimum and maximum or an enum; arrays need maxItems):\n  ${unbounded.join('\n  ')}`,
    );
  }
  if (validateOnly) {
    console.log(`openapi: valid (${ops} operations)`);
    return;
  }
  const out = path.join(__dirname, '..', 'dist');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'openapi.bundled.json'), JSON.stringify(bundled, null, 1));
  fs.writeFileSync(path.join(out, 'openapi.dereferenced.json'), JSON.stringify(deref, null, 1));
  const named = Object.entries(bundled.components ?? {}).map(([kind, items]) => `${Object.keys(items).length} ${kind}`);
  console.log(`openapi: valid (${ops} operations), bundled into dist/ (components: ${named.join(', ')})`);
}

/**
 * Redocly's bundler moves every schema, parameter and response that the path
 * files take from openapi/components/ into the document's components, under
 * the name it has there, and points each use at it. SDK generators name their
 * types after those components; a bundle that inlines a shared schema at its
 * first use and points later uses into that path gives them nothing to name
 * and references that are not valid URIs. Two files offering the same name
 * would make the bundler rename one silently, so that is an error here.
 */
async function bundleWithComponents(root) {
  const { bundle, createConfig } = await import('@redocly/openapi-core');
  const config = await createConfig({});
  const result = await bundle({ ref: root, config, dereference: false, componentRenamingConflicts: 'error' });
  const errors = result.problems.filter((p) => p.severity === 'error');
  if (errors.length) {
    const where = (p) => p.location?.[0]?.pointer ?? '';
    throw new Error(`bundling failed:\n  ${errors.map((p) => `${p.message} ${where(p)}`).join('\n  ')}`);
  }
  return result.bundle.parsed;
}

/** Every $ref of the bundle names a component (#/components/<kind>/<name>). */
function refsOutsideComponents(doc) {
  const out = [];
  const walk = (node, where) => {
    if (!node || typeof node !== 'object') return;
    if (typeof node.$ref === 'string' && !/^#\/components\/[A-Za-z]+\/[A-Za-z0-9._-]+$/.test(node.$ref)) out.push(`${where}: ${node.$ref}`);
    for (const [k, v] of Object.entries(node)) walk(v, `${where}/${k}`);
  };
  walk(doc, '#');
  return out;
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
