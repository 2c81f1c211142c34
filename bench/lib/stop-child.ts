import type { ChildProcess } from 'node:child_process';

/**
 * Stops a child process: `ask` asks it to end (a signal, a message), and
 * after `graceMs` without an exit it is killed. Resolves once it exited; at
 * once when it already had.
 */
export async function stopChild(child: ChildProcess, ask: (child: ChildProcess) => void, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  ask(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
