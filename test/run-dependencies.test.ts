import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

/**
 * `make run` installs production dependencies only (ADR 0030), while `make
 * test` installs everything, so a package that building or running needs but
 * package.json lists under devDependencies would pass CI and break a fresh
 * `make run`. What the build reads is held here: every package src/ and the
 * contract's bundler load, the compiler, and the type packages of those.
 */
const ROOT = path.join(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

/** Packages a file loads, type-only imports included: tsc needs those to build. */
function importedPackages(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  // Import and export declarations (`from '…'` at the end of a statement that starts with one), bare
  // imports, require() and import(): a message template that says "from '…'" is none of these.
  const declarations =
    /^\s*(?:import|export)\b[^;]*?\sfrom\s*'([^'.\s][^'\s]*)'|^\s*import\s*'([^'.\s][^'\s]*)'|\b(?:require|import)\(\s*'([^'.\s][^'\s]*)'\s*\)/gm;
  const specs = [...text.matchAll(declarations)].map((m) => (m[1] ?? m[2] ?? m[3])!);
  return specs.filter((s) => !s.startsWith('node:') && !builtinModules.includes(s)).map(packageOf);
}

describe('what make run installs', () => {
  const files = [...sourceFiles(path.join(ROOT, 'src')), path.join(ROOT, 'scripts', 'bundle-spec.js')];
  const used = [...new Set(files.flatMap(importedPackages))].sort();

  it('finds the packages it checks', () => {
    expect(used).toEqual(expect.arrayContaining(['express', 'knex', '@redocly/openapi-core', 'openapi-types']));
  });

  it('lists every package the build and the server load as a production dependency', () => {
    expect(used.filter((p) => !(p in pkg.dependencies))).toEqual([]);
  });

  it('lists the compiler and the type packages of those as production dependencies', () => {
    const types = ['node', ...used].map((p) => `@types/${p.replace(/^@([^/]+)\//, '$1__')}`);
    const needed = ['typescript', ...types.filter((t) => t in pkg.devDependencies || t in pkg.dependencies)];
    expect(needed.filter((p) => !(p in pkg.dependencies))).toEqual([]);
  });
});
