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
  // The run's templates, migrated once here rather than once per test file
  // (test/support/template-databases.ts says why). A failure is printed, not
  // fatal: each test file then builds its own, and fails there if it must.
  try {
    execFileSync(
      process.execPath,
      ['-r', path.join(__dirname, 'support', 'register-ts.js'), path.join(__dirname, 'support', 'build-templates.ts')],
      { stdio: 'inherit', env: process.env },
    );
  } catch {
    console.error('test/global-setup.js: the run could not build its template databases; each test file builds its own');
  }
};
