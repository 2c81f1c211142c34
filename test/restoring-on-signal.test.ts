import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { restoringOnSignal } from '../src/db/settle';

/**
 * The forced flush's settings are put back however settling ends: an
 * interrupted generator must not leave the server flushing for good. A real
 * process, interrupted while it waits.
 */
describe('restoringOnSignal', () => {
  jest.setTimeout(60_000);
  const root = path.join(__dirname, '..');

  async function interrupted(signal: NodeJS.Signals): Promise<{ code: number | null; signal: string | null; restored: string }> {
    const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'parley-settle-signal-')), 'restored');
    // The work ends 200 ms after it is told (a statement in flight); the restore must come after it.
    const script = `
      const fs = require('node:fs');
      const { restoringOnSignal } = require('./src/db/settle');
      restoringOnSignal(
        async () => fs.appendFileSync(${JSON.stringify(marker)}, 'restored\\n'),
        (interrupted) => {
          process.stdout.write('waiting\\n');
          const keep = setInterval(() => {}, 1000);
          return new Promise((resolve) =>
            interrupted.addEventListener('abort', () =>
              setTimeout(() => (fs.appendFileSync(${JSON.stringify(marker)}, 'work ended\\n'), clearInterval(keep), resolve()), 200),
            ),
          );
        },
      );`;
    const child = spawn(process.execPath, ['-r', path.join(root, 'test', 'support', 'register-ts.js'), '-e', script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.stdout.on('data', (b: Buffer) => {
      if (b.toString().includes('waiting')) child.kill(signal);
    });
    const [code, by] = (await once(child, 'exit')) as [number | null, string | null];
    clearTimeout(killer);
    const restored = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '';
    fs.rmSync(path.dirname(marker), { recursive: true, force: true });
    return { code, signal: by, restored };
  }

  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s during the work: the work is told and ends, then the restore, then the signal ends the process',
    async (signal) => {
      const end = await interrupted(signal);
      expect(end.restored).toBe('work ended\nrestored\n');
      expect(end).toMatchObject({ code: null, signal });
    },
  );

  it('returns what the work returns, restored once', async () => {
    let restored = 0;
    expect(
      await restoringOnSignal(
        async () => void restored++,
        async () => 42,
      ),
    ).toBe(42);
    expect(restored).toBe(1);
  });

  it('restores after work that fails, and passes the failure on', async () => {
    const listening = process.listenerCount('SIGINT');
    let restored = 0;
    await expect(
      restoringOnSignal(
        async () => void restored++,
        () => Promise.reject(new Error('load failed')),
      ),
    ).rejects.toThrow('load failed');
    expect(restored).toBe(1);
    expect(process.listenerCount('SIGINT')).toBe(listening);
  });
});
