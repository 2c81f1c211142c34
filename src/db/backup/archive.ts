import fs from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { BackupError } from './errors';
import { fsyncPath } from './files';
import { DATABASE_ENTRY, Manifest, MANIFEST_ENTRY, parseManifest, UPLOADS_ENTRY } from './manifest';
import type { Progress } from './progress';

/**
 * The archive is a gzip-compressed tar: manifest.json first, then the
 * database entry, then uploads/. Gzip's CRC-32 and length trailer make a
 * damaged or truncated archive fail to read rather than restore quietly
 * wrong; the manifest's SHA-256 of the database entry checks it end to end.
 */

/**
 * Writes `entries` (paths relative to `cwd`, in that order, directories not
 * recursed into) to `file`, which must not exist yet; it is created mode 0600,
 * since a backup holds every password hash and API key. Symbolic links are
 * followed, so `cwd` may link to directories elsewhere (DATA_DIR/uploads).
 */
export async function writeArchive(cwd: string, entries: string[], file: string, progress: Progress, signal?: AbortSignal): Promise<void> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      progress.advance(bytes, null, 'bytes');
      done(null, chunk);
    },
  });
  const pack = tar.c({ cwd, gzip: true, follow: true, noDirRecurse: true, strict: true }, entries);
  await pipeline(pack, counter, fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }), { signal });
  fsyncPath(file);
}

/** Reads only the archive's first entry, manifest.json, so a wrong archive is refused before any data moves. */
export async function readManifest(file: string): Promise<Manifest> {
  checkReadable(file);
  const text = await new Promise<string>((resolve, reject) => {
    const input = fs.createReadStream(file);
    const parser = new tar.Parser({ strict: true, maxDecompressionRatio: Infinity });
    let settled = false;
    const settle = (err: Error | null, value?: string) => {
      if (settled) return;
      settled = true;
      input.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    parser.on('entry', (entry: tar.ReadEntry) => {
      if (settled) return entry.resume();
      if (entry.path !== MANIFEST_ENTRY || entry.type !== 'File' || entry.size > 1 << 20) {
        entry.resume();
        return settle(new BackupError(`${file} is not a Parley backup (it does not start with manifest.json).`));
      }
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => settle(null, Buffer.concat(chunks).toString('utf8')));
    });
    parser.on('error', (err: Error) => settle(damaged(file, err)));
    parser.on('end', () => settle(new BackupError(`${file} is not a Parley backup (no manifest.json in it).`)));
    input.on('error', (err) => settle(err));
    input.pipe(parser as unknown as NodeJS.WritableStream);
  });
  return parseManifest(text, file);
}

/**
 * Extracts the archive into `dir`: only the manifest, the database entry of
 * the manifest's dialect and uploads/, only files and directories (tar also
 * refuses absolute paths and `..`). A damaged archive rejects with a
 * BackupError.
 */
export async function extractArchive(file: string, dir: string, manifest: Manifest, progress: Progress): Promise<void> {
  const total = fs.statSync(file).size;
  let bytes = 0;
  const wanted = (p: string, type: string) => {
    const name = p.replace(/\/+$/, '');
    if (type === 'Directory') return name === 'database' || name === UPLOADS_ENTRY || name.startsWith(`${UPLOADS_ENTRY}/`);
    if (type !== 'File' && type !== 'OldFile' && type !== 'ContiguousFile') return false;
    return name === MANIFEST_ENTRY || name === DATABASE_ENTRY[manifest.dialect] || name.startsWith(`${UPLOADS_ENTRY}/`);
  };
  await new Promise<void>((resolve, reject) => {
    const input = fs.createReadStream(file);
    const unpack = tar.x({
      cwd: dir,
      strict: true,
      preserveOwner: false,
      maxDecompressionRatio: Infinity,
      filter: (p, entry) => wanted(p, (entry as tar.ReadEntry).type),
    });
    const fail = (err: Error) => {
      input.destroy();
      reject(err instanceof BackupError ? err : damaged(file, err));
    };
    input.on('data', (c) => {
      bytes += c.length;
      progress.advance(bytes, total, 'bytes');
    });
    input.on('error', fail);
    unpack.on('error', fail);
    unpack.on('close', () => resolve());
    input.pipe(unpack as unknown as NodeJS.WritableStream);
  });
}

function checkReadable(file: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BackupError(`No such file: ${file}`);
    throw new BackupError(`Cannot read ${file}: ${(err as Error).message}`);
  }
  if (!stat.isFile()) throw new BackupError(`${file} is not a file.`);
}

function damaged(file: string, err: Error): BackupError {
  return new BackupError(`${file} is damaged or not a Parley backup (${err.message}).`);
}
