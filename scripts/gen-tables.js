#!/usr/bin/env node
// Writes generated/tables.d.ts, the row types of every table and knex's Tables
// map, from the migrations applied to a scratch in-memory SQLite database
// (scripts/table-types.ts, docs/adr/0037-typed-tables.md). With --check it
// writes nothing and fails when the file is not what the migrations give.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const ROOT = path.join(__dirname, '..');
const OUT = path.join(ROOT, 'generated', 'tables.d.ts');

// The migrations are TypeScript and this runs before any build: compile each
// of the repository's modules as it is required (TypeScript is a production
// dependency; nothing is type-checked here, tsc does that).
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  module._compile(outputText, filename);
};

async function main() {
  const { createDb } = require('../src/db/connection.ts');
  const { migrateLatest } = require('../src/db/migrate.ts');
  const { readTables, renderTables } = require('./table-types.ts');
  const db = createDb({ databaseUrl: null, dataDir: '' }, ':memory:');
  let text;
  try {
    await migrateLatest(db);
    text = renderTables(await readTables(db));
  } finally {
    await db.destroy();
  }
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
    if (current !== text) {
      console.error('generated/tables.d.ts is stale: run `npm run gen`');
      process.exit(1);
    }
    return;
  }
  fs.writeFileSync(OUT, text);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
