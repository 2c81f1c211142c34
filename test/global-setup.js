// Validates openapi/ and writes dist/openapi.dereferenced.json once per jest
// run (swagger-parser's ESM dependencies do not load inside jest's runtime);
// every test file then reads that document.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
module.exports = async () => {
  execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'bundle-spec.js')], { stdio: 'inherit' });
  // Names this run's template databases (test/support/template-databases.ts); the
  // workers start after this and inherit it.
  process.env.PARLEY_TEST_RUN = String(process.pid);
};
