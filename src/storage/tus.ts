import fsp from 'node:fs/promises';
import path from 'node:path';
import { FileStore as TusFileStore } from '@tus/file-store';

/** Where unfinished resumable uploads are kept, under DATA_DIR/uploads (a name no path id can have). */
export const TUS_DIRECTORY = '.tus';

/** The lock files of resumable uploads, beside them (a directory: tus' listing pairs only `<id>` with `<id>.json`). */
export const TUS_LOCK_DIRECTORY = path.join(TUS_DIRECTORY, 'locks');

/**
 * The resumable-upload store over DATA_DIR/uploads/.tus. Its state lives in
 * the directory alone (each upload's bytes and a `<id>.json` beside them),
 * so the server's tus endpoint and the upload sweep open one each, and so
 * do several processes sharing the directory. Uploads left unfinished
 * `expiryMs` after their creation are gone for tus (410 Gone) and removed
 * by `deleteExpired()` — finished ones too: the store never updates the
 * offset in an upload's record, so a finished upload left there (its
 * process died while storing it) counts as unfinished and expires as well.
 */
export function openTusStore(uploadsRoot: string, expiryMs: number): TusFileStore {
  return new TusFileStore({ directory: path.join(uploadsRoot, TUS_DIRECTORY), expirationPeriodInMilliseconds: expiryMs });
}

/**
 * Resumable uploads are named `<user id>-<random>` (the server's naming, see
 * src/http/tus.ts), so one user's are found by a listing of the directory,
 * whichever process created them.
 */
export const tusUploadPrefix = (userId: number) => `${userId}-`;

/**
 * A user's unfinished resumable uploads: how many, and the bytes they declared
 * (what they may still fill). Expired ones, gone for tus, do not count.
 */
export async function countUnfinishedUploads(
  store: TusFileStore,
  uploadsRoot: string,
  userId: number,
  expiryMs: number,
  now = Date.now(),
): Promise<{ count: number; bytes: number }> {
  const prefix = tusUploadPrefix(userId);
  let names: string[];
  try {
    names = await fsp.readdir(path.join(uploadsRoot, TUS_DIRECTORY));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { count: 0, bytes: 0 };
    throw err;
  }
  let count = 0;
  let bytes = 0;
  for (const name of names) {
    if (!name.startsWith(prefix) || name.endsWith('.json')) continue;
    // Finishing or cancelled between the listing and this read: not unfinished any more.
    const upload = await store.getUpload(name).catch(() => null);
    if (!upload) continue;
    const created = upload.creation_date ? Date.parse(upload.creation_date) : now;
    if (now - created > expiryMs) continue;
    count++;
    bytes += upload.size ?? 0;
  }
  return { count, bytes };
}
