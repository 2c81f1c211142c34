import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
/** The CLI from source, compiled on load (test/support/register-ts.js): never a stale build. */
const CLI_ARGS = ['-r', path.join(ROOT, 'test', 'support', 'register-ts.js'), path.join(ROOT, 'src', 'cli', 'index.ts')];

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs the admin CLI with ARGS and DATA_DIR / DATABASE_URL (and any other setting) from `env`, in its own
 * process, as an operator would; nothing else of this process's environment reaches it.
 * `onStderr` sees stderr as it arrives (the progress lines).
 */
export function runCli(
  args: string[],
  env: { DATA_DIR: string; DATABASE_URL?: string | null; [setting: string]: string | null | undefined },
  onStderr: (soFar: string) => void = () => {},
): Promise<CliResult> {
  const started = Date.now();
  const childEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  for (const [name, value] of Object.entries(env)) if (value) childEnv[name] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
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
