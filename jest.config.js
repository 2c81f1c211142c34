/** jest runs TypeScript through swc; types are checked separately by `tsc --noEmit`. */
const fs = require('node:fs');
const path = require('node:path');

/**
 * `make test` runs jest twice when TEST_MYSQL_URL is set: every suite on
 * SQLite, then (ONLY_MYSQL=1) the MariaDB half of the suites that run per
 * database. A test file either runs per database (eachDatabase, all of it)
 * or needs none of MariaDB (no eachDatabase): the second pass leaves the
 * latter out, so no test is run, or counted, twice. A file mixing the two
 * is refused here, in both passes.
 */
function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const perDatabase = [];
const once = [];
for (const file of ['src', 'test'].flatMap((root) => testFiles(path.join(__dirname, root)))) {
  const text = fs.readFileSync(file, 'utf8');
  if (!/\beachDatabase\(/.test(text)) {
    once.push(file);
    continue;
  }
  const outside = /^(describe|it|test)(\.\w+)*\(/m.exec(text);
  if (outside) {
    throw new Error(
      `${path.relative(__dirname, file)}: "${outside[0]}…" outside eachDatabase would run in both database passes; move it to a file of its own`,
    );
  }
  perDatabase.push(file);
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.ONLY_MYSQL ? once.map((f) => `^${escape(f)}$`) : [])],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
    // @tus/server and its srvx are ES modules only: Node (20.19+) requires them as they
    // are, but jest's module system needs them compiled to CommonJS. So is Preact 11, which
    // the web client's state modules import (test/web/web-lib.test.ts).
    '/node_modules/(@tus|srvx|preact|@preact)/.+\\.m?js$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@tus|srvx|preact|@preact)/)'],
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
  testTimeout: 30000,
};
