import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'index.js');

/**
 * Fails unless dist/ holds a build at least as new as every source file, so
 * tests that run the CLI as an operator would never run stale code
 * (`make test` builds first).
 */
export function requireFreshBuild(): void {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (make test does).`);
  const built = fs.statSync(CLI).mtimeMs;
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((max, d) => {
      const p = path.join(dir, d.name);
      return Math.max(max, d.isDirectory() ? newest(p) : d.name.endsWith('.ts') ? fs.statSync(p).mtimeMs : 0);
    }, 0);
  if (newest(path.join(ROOT, 'src')) > built) throw new Error('dist/ is older than src/: run `npm run build` first (make test does).');
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `node dist/src/cli/index.js ARGS` with DATA_DIR / DATABASE_URL from `env`, as an operator would.
 * `onStderr` sees stderr as it arrives (the progress lines).
 */
export function runCli(
  args: string[],
  env: { DATA_DIR: string; DATABASE_URL?: string | null },
  onStderr: (soFar: string) => void = () => {},
): Promise<CliResult> {
  const started = Date.now();
  const childEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: env.DATA_DIR };
  if (env.DATABASE_URL) childEnv.DATABASE_URL = env.DATABASE_URL;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => {
      stderr += b;
      onStderr(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/** The last line of stderr: the error an operator reads (progress lines come before it). */
export function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}
