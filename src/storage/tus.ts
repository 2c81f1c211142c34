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
