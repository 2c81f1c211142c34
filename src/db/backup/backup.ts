import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config';
import { sqliteFileOf, type Dialect } from '../connection';
import { writeArchive } from './archive';
import { BackupAborted, BackupError } from './errors';
import { hashFile, renameDurably } from './files';
import { DATABASE_ENTRY, FORMAT, FORMAT_VERSION, Manifest, MANIFEST_ENTRY, parleyVersion, UPLOADS_ENTRY } from './manifest';
import { dumpMariadb } from './mariadb';
import { Progress, silentProgress } from './progress';
import { snapshotSqlite } from './sqlite';
import { listUploads } from './uploads';

export interface BackupOptions {
  output: string;
  /** Replace an existing file at `output`. */
  force?: boolean;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface BackupResult {
  file: string;
  bytes: number;
  manifest: Manifest;
}

/**
 * Writes a backup of the configured database (and DATA_DIR/uploads) to
 * `output` while the server keeps running. Everything is assembled in a
 * scratch directory beside `output` and the finished archive is renamed into
 * place last, so an interrupted or failed backup leaves no file at `output`.
 */
export async function createBackup(config: Pick<Config, 'dataDir' | 'databaseUrl'>, opts: BackupOptions): Promise<BackupResult> {
  const progress = opts.progress ?? silentProgress;
  const output = path.resolve(opts.output);
  const dialect: Dialect = config.databaseUrl ? 'mysql' : 'sqlite';
  checkOutput(output, config.dataDir, opts.force ?? false);
  const staging = fs.mkdtempSync(path.join(path.dirname(output), `.${path.basename(output)}.tmp-`));
  try {
    const dbEntry = DATABASE_ENTRY[dialect];
    const dbFile = path.join(staging, dbEntry);
    fs.mkdirSync(path.dirname(dbFile));
    const createdAt = new Date().toISOString();
    let snapshot: { tables: Record<string, number>; migration: string | null; bytes: number; sha256: string };
    if (dialect === 'sqlite') {
      progress.step('Copying the SQLite database (online backup)');
      const contents = await snapshotSqlite(sqliteFileOf(config), dbFile, progress, opts.signal);
      snapshot = { ...contents, ...(await hashFile(dbFile)) };
    } else {
      progress.step('Dumping the MariaDB database (mariadb-dump --single-transaction)');
      snapshot = await dumpMariadb(config.databaseUrl!, dbFile, progress, opts.signal);
    }
    const uploads = listUploads(config.dataDir);
    for (const skipped of uploads?.skipped ?? []) progress.warn(`not archived (not a regular file): ${skipped}`);
    // The archive's uploads/ entries are read through a link to DATA_DIR/uploads.
    if (uploads) fs.symlinkSync(path.join(config.dataDir, UPLOADS_ENTRY), path.join(staging, UPLOADS_ENTRY));
    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      dialect,
      migration: snapshot.migration!,
      created_at: createdAt,
      parley_version: parleyVersion(),
      tables: snapshot.tables,
      database: { path: dbEntry, bytes: snapshot.bytes, sha256: snapshot.sha256 },
      uploads: uploads ? { files: uploads.files, bytes: uploads.bytes } : null,
    };
    fs.writeFileSync(path.join(staging, MANIFEST_ENTRY), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    progress.step('Writing the archive');
    const partial = path.join(staging, 'archive.partial');
    await writeArchive(
      staging,
      [MANIFEST_ENTRY, path.dirname(dbEntry), dbEntry, ...(uploads?.entries ?? [])],
      partial,
      progress,
      opts.signal,
    );
    const bytes = fs.statSync(partial).size;
    renameDurably(partial, output);
    return { file: output, bytes, manifest };
  } catch (err) {
    if (opts.signal?.aborted) throw new BackupAborted('Interrupted: no backup was written.');
    throw err;
  } finally {
    // Removes the link to DATA_DIR/uploads, not what it points to.
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function checkOutput(output: string, dataDir: string, force: boolean): void {
  const dir = path.dirname(output);
  if (!fs.existsSync(dir)) throw new BackupError(`The directory ${dir} does not exist.`);
  if (fs.existsSync(output)) {
    if (fs.statSync(output).isDirectory()) throw new BackupError(`${output} is a directory; give a file name.`);
    if (!force) throw new BackupError(`${output} already exists; pass --force to replace it.`);
  }
  const uploads = path.join(path.resolve(dataDir), UPLOADS_ENTRY) + path.sep;
  if (output.startsWith(uploads)) throw new BackupError(`Write the backup outside ${uploads} (it would archive itself).`);
}
