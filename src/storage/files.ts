import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { isAvatarKey } from '../domain/avatars';
import { isEmojiKey } from '../domain/custom-emoji';
import { isSafePathId } from '../domain/uploads';

/**
 * Where uploaded files live: one small interface, so that another backend
 * (an object store) can take the local directory's place. Keys are upload
 * path ids (`<realm>/<bucket>/<token>/<name>`) or custom emoji keys
 * (`emoji/<realm>/…`, src/domain/custom-emoji.ts); every method refuses a key
 * that is not one before touching the backend.
 */
export interface FileStore {
  /** A new file being written: invisible under any key until `commit`. */
  create(): Promise<PendingFile>;
  /** Size of a stored file, or null when there is none. */
  stat(key: string): Promise<{ size: number } | null>;
  /** The file's bytes from `start` to `end` inclusive (the whole file by default), or null when there is none. */
  read(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  /** Removes these files; a missing one is not an error. */
  remove(keys: readonly string[]): Promise<void>;
  /**
   * Publishes a finished file of the local file system under `key`, moving
   * it (the source is gone afterwards): a resumable upload's assembled file.
   */
  moveIn(localPath: string, key: string): Promise<void>;
  /**
   * Removes files being written (`create`) that were neither committed nor
   * aborted and have not been written to for `olderThanMs` — what a crashed
   * process leaves behind; looks at no more than `limit` of them per call.
   * Returns how many it removed.
   */
  removeLeftovers(olderThanMs: number, limit: number): Promise<number>;
}

/** A file ready to be published under a key, or dropped. */
export interface StagedFile {
  /** Publishes the file under `key`. */
  commit(key: string): Promise<void>;
  /** Drops the bytes; safe to call after commit (does nothing then) or twice. */
  abort(): Promise<void>;
}

export interface PendingFile extends StagedFile {
  /** Write the bytes here (commit waits until the stream has finished); backpressure applies as to any file stream. */
  readonly stream: Writable;
}

/**
 * Files under one directory (DATA_DIR/uploads). Several server processes may
 * share it: a file is written under a unique name in `.incoming/` and renamed
 * into place, so no reader ever sees half a file and two writers never meet
 * (keys carry a random token). Directories are created on first use.
 */
export class LocalFileStore implements FileStore {
  private readonly root: string;
  private readonly incoming: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.incoming = path.join(this.root, '.incoming');
  }

  /** The key's absolute path, only when the key is a path id (or an avatar's key) and the result lies inside the root. */
  private locate(key: string): string | null {
    if (!isSafePathId(key) && !isAvatarKey(key) && !isEmojiKey(key)) return null;
    const full = path.resolve(this.root, ...key.split('/'));
    return full.startsWith(this.root + path.sep) ? full : null;
  }

  async create(): Promise<PendingFile> {
    await fsp.mkdir(this.incoming, { recursive: true });
    const temp = path.join(this.incoming, randomUUID());
    const stream = fs.createWriteStream(temp, { flags: 'wx' });
    let state: 'open' | 'committed' | 'aborted' = 'open';
    let aborting: Promise<void> | null = null;
    const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    return {
      stream,
      commit: async (key) => {
        const target = this.locate(key);
        if (!target) throw new Error('not an upload path id');
        if (state !== 'open') throw new Error(`upload already ${state}`);
        await finished(stream);
        await closed;
        await fsp.mkdir(path.dirname(target), { recursive: true });
        await fsp.rename(temp, target);
        state = 'committed';
      },
      abort: () => {
        if (state === 'committed') return Promise.resolve();
        state = 'aborted';
        // The open may still be pending: unlinking before the close could
        // leave the file created afterwards behind.
        aborting ??= (async () => {
          stream.destroy();
          await closed;
          await fsp.rm(temp, { force: true });
        })();
        return aborting;
      },
    };
  }

  async moveIn(localPath: string, key: string): Promise<void> {
    const target = this.locate(key);
    if (!target) throw new Error('not an upload path id');
    await fsp.mkdir(path.dirname(target), { recursive: true });
    try {
      await fsp.rename(localPath, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      // Another file system (the source lies outside the upload directory's
      // mount): copy under a staging name first, so the key never names half
      // a file, then publish it and drop the source.
      const temp = path.join(this.incoming, randomUUID());
      await fsp.mkdir(this.incoming, { recursive: true });
      try {
        await fsp.copyFile(localPath, temp, fs.constants.COPYFILE_EXCL);
        await fsp.rename(temp, target);
      } catch (copyErr) {
        await fsp.rm(temp, { force: true });
        throw copyErr;
      }
      await fsp.rm(localPath, { force: true });
    }
  }

  async removeLeftovers(olderThanMs: number, limit: number): Promise<number> {
    let dir: fs.Dir;
    try {
      dir = await fsp.opendir(this.incoming);
    } catch {
      return 0;
    }
    const cutoff = Date.now() - olderThanMs;
    let seen = 0;
    let removed = 0;
    try {
      for await (const entry of dir) {
        if (seen++ >= limit) break;
        const full = path.join(this.incoming, entry.name);
        // mtime moves with every write: a file still being received is never this old.
        const s = await fsp.stat(full).catch(() => null);
        if (!s?.isFile() || s.mtimeMs >= cutoff) continue;
        await fsp.rm(full, { force: true });
        removed++;
      }
    } finally {
      await dir.close().catch(() => undefined);
    }
    return removed;
  }

  async stat(key: string): Promise<{ size: number } | null> {
    const full = this.locate(key);
    if (!full) return null;
    try {
      const s = await fsp.stat(full);
      return s.isFile() ? { size: s.size } : null;
    } catch {
      return null;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    const full = this.locate(key);
    if (!full) return null;
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(full, 'r');
    } catch {
      return null;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const full = this.locate(key);
      if (full) await fsp.rm(full, { force: true });
    }
  }
}
