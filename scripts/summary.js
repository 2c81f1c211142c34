#!/usr/bin/env node
// Prints one plain closing line for the whole `make test` run:
// "N passed, N failed" over jest (each database) and dredd.
'use strict';
const fs = require('node:fs');
let passed = 0, failed = 0;
const parts = [];
for (const [label, file] of [['jest sqlite', '.tmp-jest-sqlite.json'], ['jest mysql', '.tmp-jest-mysql.json']]) {
  if (!fs.existsSync(file)) continue;
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  passed += r.numPassedTests; failed += r.numFailedTests;
  parts.push(`${label}: ${r.numPassedTests}/${r.numTotalTests}`);
}
if (fs.existsSync('.tmp-dredd.log')) {
  const m = /complete: (\d+) passing, (\d+) failing, (\d+) errors?, (\d+) skipped/.exec(fs.readFileSync('.tmp-dredd.log', 'utf8'));
  if (m) {
    passed += Number(m[1]); failed += Number(m[2]) + Number(m[3]);
    parts.push(`dredd: ${m[1]} passing, ${m[2]} failing, ${m[3]} errors, ${m[4]} skipped`);
  }
}
console.log(parts.join(' | '));
console.log(`${passed} passed, ${failed} failed`);
