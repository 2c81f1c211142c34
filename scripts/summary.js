#!/usr/bin/env node
// Prints the closing lines of a `make test` run: each part's result (jest and
// dredd, on SQLite and on MariaDB), then "N passed, N failed" over all of them.
// A part that did not run says so. Without TEST_MYSQL_URL the MariaDB parts
// cannot run: the summary says so loudly, and with REQUIRE_MYSQL=1 (CI) that
// fails the run.
'use strict';
const fs = require('node:fs');

const mysql = Boolean((process.env.TEST_MYSQL_URL || '').trim());
let passed = 0;
let failed = 0;
let missing = 0;
const parts = [];
const seconds = (ms) => `${Math.round(ms / 1000)} s`;

function jest(label, file) {
  if (!fs.existsSync(file)) return false;
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  // A suite that fails to load has no failed test, but is a failure.
  const broken = r.numRuntimeErrorTestSuites || 0;
  passed += r.numPassedTests;
  failed += r.numFailedTests + broken;
  const end = Math.max(r.startTime, ...r.testResults.map((t) => t.endTime || 0));
  parts.push(
    `${label}: ${r.numPassedTests}/${r.numTotalTests}${broken ? `, ${broken} suites failed to run` : ''} (${seconds(end - r.startTime)})`,
  );
  return true;
}

function dredd(label, file) {
  if (!fs.existsSync(file)) return false;
  // dredd colours its output even into a pipe: read it without the escape codes.
  // eslint-disable-next-line no-control-regex -- the ANSI escape is what we strip
  const text = fs.readFileSync(file, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
  const m = /complete: (\d+) passing, (\d+) failing, (\d+) errors?, (\d+) skipped/.exec(text);
  if (!m) {
    failed += 1;
    parts.push(`${label}: did not complete`);
    return true;
  }
  passed += Number(m[1]);
  failed += Number(m[2]) + Number(m[3]);
  const took = /complete: Tests took (\d+)ms/.exec(text);
  parts.push(`${label}: ${m[1]} passing, ${m[2]} failing, ${m[3]} errors, ${m[4]} skipped${took ? ` (${seconds(Number(took[1]))})` : ''}`);
  return true;
}

for (const [label, read, file, needsMysql] of [
  ['jest sqlite', jest, '.tmp-jest-sqlite.json', false],
  ['jest mariadb', jest, '.tmp-jest-mysql.json', true],
  ['dredd sqlite', dredd, '.tmp-dredd-sqlite.log', false],
  ['dredd mariadb', dredd, '.tmp-dredd-mysql.log', true],
]) {
  if (needsMysql && !mysql) continue;
  if (!read(label, file)) {
    missing++;
    parts.push(`${label}: not run`);
  }
}

console.log(parts.join(' | '));
if (!mysql) {
  const bar = '!'.repeat(78);
  console.log(bar);
  console.log('!!  MariaDB was NOT tested: TEST_MYSQL_URL is not set, so jest and dredd ran on SQLite only.');
  console.log('!!  Production runs on MariaDB. `bash scripts/mariadb.sh start` prints a URL; then run');
  console.log('!!  `TEST_MYSQL_URL=<that URL> make test` (as CI does, .ci/run).');
  console.log(bar);
}
console.log(
  `${passed} passed, ${failed} failed${missing ? `, ${missing} parts not run` : ''}${mysql ? '' : ' (SQLite only: MariaDB NOT tested)'}`,
);
if (!mysql && process.env.REQUIRE_MYSQL === '1') {
  console.log('REQUIRE_MYSQL=1: a run without MariaDB is a failure.');
  process.exit(1);
}
process.exit(failed || missing ? 1 : 0);
