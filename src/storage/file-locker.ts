import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/server';

export interface FileLockerOptions {
  /** How long a request waits for another's lock before tus answers it with its lock timeout. */
  acquireTimeoutMs: number;
  /** A lock file not refreshed for this long belongs to a process that died: it is taken over. */
  staleMs: number;
  /** How often a waiting request tries again. */
  pollMs: number;
}

const DEFAULTS: FileLockerOptions = { acquireTimeoutMs: 30_000, staleMs: 30_000, pollMs: 50 };

/**
 * tus' per-upload lock as files in a directory, so that it holds across
 * every process sharing that directory (@tus/server ships only an in-memory
 * locker, which keeps apart the requests of one process alone).
 * - Taking the lock creates `<id>.lock` exclusively (O_EXCL: one creator
 *   wins, also between processes); the holder rewrites its time every
 *   third of `staleMs`, and a lock not refreshed for `staleMs` (its process
 *   died) is removed by the next request that wants it.
 * - Another request waits, polling, up to `acquireTimeoutMs`, then gets tus'
 *   lock-timeout answer. A holder in the same process is asked to stop, as
 *   tus' in-memory locker does (a client resuming after a broken connection
 *   should not wait for the old request); one in another process is not:
 *   there is no channel for that, and its request ends by itself when its
 *   client goes away.
 * - Taking over a stale lock is not atomic: two requests that find the same
 *   dead lock at the same moment could both proceed. That needs a crash and
 *   then two clients on one upload within one poll.
 */
export class FileLocker implements Locker {
  readonly options: FileLockerOptions;
  /** The locks this process holds, by upload id, with the way to ask each holder to stop. */
  readonly held = new Map<string, RequestRelease>();

  constructor(
    readonly directory: string,
    options: Partial<FileLockerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  newLock(id: string): Lock {
    return new FileLock(this, id);
  }
}

class FileLock implements Lock {
  private readonly file: string;
  /** Written into the file, so that unlocking never removes a lock taken over by someone else. */
  private readonly token = randomUUID();
  private refresh: NodeJS.Timeout | null = null;

  constructor(
    private readonly locker: FileLocker,
    private readonly id: string,
  ) {
    // tus ids are validated by the store before any lock; the name is still kept to one path segment.
    this.file = path.join(locker.directory, `${path.basename(id)}.lock`);
  }

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const { acquireTimeoutMs, staleMs, pollMs } = this.locker.options;
    await fsp.mkdir(this.locker.directory, { recursive: true });
    const deadline = Date.now() + acquireTimeoutMs;
    let asked = false;
    for (;;) {
      try {
        await fsp.writeFile(this.file, this.token, { flag: 'wx' });
        this.locker.held.set(this.id, requestRelease);
        this.refresh = setInterval(() => {
          const now = new Date();
          fsp.utimes(this.file, now, now).catch(() => undefined);
        }, staleMs / 3);
        this.refresh.unref();
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = this.locker.held.get(this.id);
      if (holder && !asked) {
        asked = true;
        await holder();
      }
      const held = await fsp.stat(this.file).catch(() => null);
      if (held && Date.now() - held.mtimeMs > staleMs) {
        await fsp.rm(this.file, { force: true });
        continue;
      }
      if (signal.aborted || Date.now() >= deadline) throw ERRORS.ERR_LOCK_TIMEOUT;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  async unlock(): Promise<void> {
    if (this.refresh) clearInterval(this.refresh);
    this.refresh = null;
    this.locker.held.delete(this.id);
    const owner = await fsp.readFile(this.file, 'utf8').catch(() => null);
    if (owner === this.token) await fsp.rm(this.file, { force: true });
  }
}
