import fs from 'node:fs';
import path from 'node:path';
import { UPLOADS_ENTRY } from './manifest';

/**
 * DATA_DIR/uploads in a backup. Uploaded files are written once and never
 * changed in place, and the server writes a file before it commits the row
 * that names it; so archiving them after the database snapshot means every
 * file the snapshot refers to is already there (files newer than the
 * snapshot ride along unreferenced).
 */
export interface UploadsListing {
  /** Paths relative to DATA_DIR ("uploads", "uploads/2/ab/x.png"), directories before their contents. */
  entries: string[];
  files: number;
  bytes: number;
  /** Symbolic links and special files, which are not archived. */
  skipped: string[];
}

/** DATA_DIR/uploads, listed with the paths its entries have in the archive (the same as under DATA_DIR). */
export function listUploads(dataDir: string): UploadsListing | null {
  if (!fs.existsSync(path.join(dataDir, UPLOADS_ENTRY))) return null;
  const out: UploadsListing = { entries: [UPLOADS_ENTRY], files: 0, bytes: 0, skipped: [] };
  const walk = (rel: string) => {
    for (const d of fs.readdirSync(path.join(dataDir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = `${rel}/${d.name}`;
      // Uploads still being received (src/storage/files.ts, and resumable ones in .tus): not files yet, and renamed or gone at any moment.
      if (rel === UPLOADS_ENTRY && (d.name === '.incoming' || d.name === '.tus')) continue;
      if (d.isDirectory()) {
        out.entries.push(child);
        walk(child);
      } else if (d.isFile()) {
        out.entries.push(child);
        out.files++;
        out.bytes += fs.statSync(path.join(dataDir, child)).size;
      } else {
        out.skipped.push(child);
      }
    }
  };
  walk(UPLOADS_ENTRY);
  return out;
}

/** Regular files under a restored uploads directory (to check against the manifest). */
export function countFiles(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  if (!fs.existsSync(dir)) return { files, bytes };
  for (const d of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!d.isFile()) continue;
    files++;
    bytes += fs.statSync(path.join(d.parentPath, d.name)).size;
  }
  return { files, bytes };
}

/** True when DATA_DIR/uploads holds at least one file. */
export function uploadsHoldFiles(dataDir: string): boolean {
  return countFiles(path.join(dataDir, UPLOADS_ENTRY)).files > 0;
}

/**
 * Puts the restored uploads (or none, when the backup had none) in place of
 * DATA_DIR/uploads; the old directory moves into `trash`, deleted with the
 * restore's scratch directory. Both are renames within DATA_DIR.
 */
export function replaceUploads(dataDir: string, restored: string | null, trash: string): void {
  const target = path.join(dataDir, UPLOADS_ENTRY);
  if (fs.existsSync(target)) fs.renameSync(target, trash);
  if (restored && fs.existsSync(restored)) fs.renameSync(restored, target);
}
