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

function countOperations(doc) {
  let n = 0;
  for (const item of Object.values(doc.paths ?? {}))
    for (const m of ['get', 'post', 'put', 'patch', 'delete']) if (item[m]) n++;
  return n;
}

main().catch((err) => {
  console.error(`openapi: INVALID: ${err.message}`);
  process.exit(1);
});
