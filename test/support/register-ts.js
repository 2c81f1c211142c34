// `node -r test/support/register-ts.js src/main.ts` runs the server from
// source, compiled on load by swc with the options jest uses
// (jest.config.js): a test that starts Parley as a process then runs the
// code it is testing, with no build step and no dist/ that could be stale.
//
// A compiled module is kept under the system's temporary directory, named by
// the hash of its path, its source and the options: the suite starts Parley
// and its CLI as processes some hundred times, each loading some 300 modules,
// and compiled them all every time. A changed source is a different name, so
// nothing stale is ever run.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { transformSync } = require('@swc/core');
const swcVersion = require('@swc/core/package.json').version;

const options = (filename) => ({
  filename,
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
});

const cacheDir = path.join(os.tmpdir(), 'parley-register-ts-cache');

function compile(filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto
    .createHash('sha256')
    .update(`${swcVersion}\0${JSON.stringify(options(filename))}\0${source}`)
    .digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // Not compiled yet.
  }
  const { code } = transformSync(source, options(filename));
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    // Written aside, then renamed: a process reading it at once never sees half a module.
    const tmp = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  } catch {
    // A cache that cannot be written only costs the next process this compilation.
  }
  return code;
}

require.extensions['.ts'] = (module, filename) => {
  module._compile(compile(filename), filename);
};
