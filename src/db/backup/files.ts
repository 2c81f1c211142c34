import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Flushes a file, or a directory's entries (after a rename into it), to disk. */
export function fsyncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Renames `from` over `to` (same file system: atomic) and makes the new name durable. */
export function renameDurably(from: string, to: string): void {
  fs.renameSync(from, to);
  fsyncPath(path.dirname(to));
}

export async function hashFile(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}
