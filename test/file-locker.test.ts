import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileLocker } from '../src/storage/file-locker';

/** Two FileLocker instances on one directory stand for two server processes sharing it. */
describe('FileLocker (tus locks as files)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-locks-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const never = new AbortController().signal;

  it('keeps a lock of one process from another until it is released, then hands it over', async () => {
    const one = new FileLocker(dir);
    const two = new FileLocker(dir, { acquireTimeoutMs: 5_000 });
    const first = one.newLock('upload-a');
    await first.lock(never, () => undefined);
    let acquired = false;
    const second = two.newLock('upload-a');
    const waiting = second.lock(never, () => undefined).then(() => (acquired = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(acquired).toBe(false);
    await first.unlock();
    await waiting;
    expect(acquired).toBe(true);
    await second.unlock();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers with tus’ lock timeout when the other process keeps the lock', async () => {
    const one = new FileLocker(dir);
    const two = new FileLocker(dir, { acquireTimeoutMs: 200 });
    const first = one.newLock('upload-b');
    await first.lock(never, () => undefined);
    await expect(two.newLock('upload-b').lock(never, () => undefined)).rejects.toMatchObject({
      status_code: 500,
      body: 'failed to acquire lock before timeout',
    });
    await first.unlock();
  });

  it('asks a holder in the same process to stop, as tus’ in-memory locker does', async () => {
    const locker = new FileLocker(dir);
    const first = locker.newLock('upload-c');
    let asked = 0;
    await first.lock(never, async () => {
      asked++;
      await first.unlock();
    });
    const second = locker.newLock('upload-c');
    await second.lock(never, () => undefined);
    expect(asked).toBe(1);
    await second.unlock();
  });

  it('takes over the lock of a process that died (not refreshed for staleMs)', async () => {
    fs.writeFileSync(path.join(dir, 'upload-d.lock'), 'a dead process');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, 'upload-d.lock'), old, old);
    const lock = new FileLocker(dir, { staleMs: 30_000, acquireTimeoutMs: 1_000 }).newLock('upload-d');
    await lock.lock(never, () => undefined);
    await lock.unlock();
    expect(fs.existsSync(path.join(dir, 'upload-d.lock'))).toBe(false);
  });
});
