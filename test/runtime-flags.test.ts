import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The V8 flags the server sets on itself (src/runtime-flags.ts, ADR 0025).
// V8 reports each pretenuring decision with --trace-pretenuring-statistics
// ("… maybe tenure => tenure"): a workload that keeps everything one
// allocation site makes gets that site tenured, unless the flags are set.

const ROOT = path.join(__dirname, '..');
const REGISTER = path.join(ROOT, 'test', 'support', 'register-ts.js');
const KEEP_EVERYTHING =
  'function make(i, r) { return { a: i, b: r }; }' +
  'const keep = []; for (let r = 0; r < 10; r++) for (let i = 0; i < 2e5; i++) keep.push(make(i, r));' +
  'console.log(keep.length);';

function tenuringDecisions(prelude: string): number {
  const run = spawnSync(process.execPath, ['--trace-pretenuring-statistics', '-r', REGISTER, '-e', prelude + KEEP_EVERYTHING], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(run.status).toBe(0);
  expect(run.stdout).toContain('2000000');
  return (run.stdout.match(/=> tenure\b/g) ?? []).length;
}

describe('runtime V8 flags', () => {
  it('V8 tenures an allocation site whose objects all survive, without the flags', () => {
    expect(tenuringDecisions('')).toBeGreaterThan(0);
  });

  it('never tenures an allocation site once src/runtime-flags.ts has run', () => {
    expect(tenuringDecisions("require('./src/runtime-flags');")).toBe(0);
  });

  it('is the first thing the server process loads', () => {
    const imports = fs
      .readFileSync(path.join(ROOT, 'src', 'main.ts'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('import '));
    expect(imports[0]).toBe("import './runtime-flags';");
  });
});
