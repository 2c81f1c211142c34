// `node -r test/support/register-ts.js src/main.ts` runs the server from
// source, compiled on load by swc with the options jest uses
// (jest.config.js): a test that starts Parley as a process then runs the
// code it is testing, with no build step and no dist/ that could be stale.
'use strict';
const fs = require('node:fs');
const { transformSync } = require('@swc/core');

const options = (filename) => ({
  filename,
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
});

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), options(filename));
  module._compile(code, filename);
};
