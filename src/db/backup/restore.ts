import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config';
import { createDb, Dialect, mysqlConnectionOptions, sqliteFileOf } from '../connection';
import { MIGRATION_NAMES, migrateLatest } from '../migrate';
import { settleAfterBulkLoad } from '../settle';
import { extractArchive, readManifest } from './archive';
import { BackupError, throwIfAborted } from './errors';
import { hashFile, renameDurably } from './files';
import { DIALECT_NAME, Manifest, UPLOADS_ENTRY } from './manifest';
import { loadMariadbDump, MariadbServer } from './mariadb';
import { Progress, silentProgress } from './progress';
import { finishSqliteFile, inspectSqlite, releaseSqliteTarget, sqliteTableWithData } from './sqlite';
import { countFiles, replaceUploads, uploadsHoldFiles } from './uploads';

export interface RestoreOptions {
  input: string;
  /** Replace a target that already holds data. */
  force?: boolean;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface RestoreResult {
  manifest: Manifest;
  /** Where the database went: the SQLite file, or the MariaDB database name. */
  target: string;
  /** Migrations applied after restoring (a backup from an older Parley). */
  applied: string[];
}

/**
 * Restores a backup into the configured target (DATA_DIR's SQLite file, or
 * the database DATABASE_URL names) and DATA_DIR/uploads.
 *
 * Everything that can be checked is checked before the target changes: the
 * manifest (format, dialect, a migration this code knows), then the archive's
 * checksums, then the restored database itself (integrity, row counts per
 * table), then the migrations up to this code's latest run on the restored
 * copy. Only then is the copy swapped in, by renames (a file rename for
 * SQLite, one RENAME TABLE for MariaDB), so a failed restore leaves the
 * target as it was.
 */
export async function restoreBackup(config: Pick<Config, 'dataDir' | 'databaseUrl'>, opts: RestoreOptions): Promise<RestoreResult> {
  const progress = opts.progress ?? silentProgress;
  const input = path.resolve(opts.input);
  const force = opts.force ?? false;
  const manifest = await readManifest(input);
  const dialect: Dialect = config.databaseUrl ? 'mysql' : 'sqlite';
  checkManifest(manifest, input, dialect);
  const dataDir = path.resolve(config.dataDir);
  fs.mkdirSync(dataDir, { recursive: true });

  const target = dialect === 'sqlite' ? new SqliteTarget(dataDir) : new MariadbTarget(config.databaseUrl!);
  try {
    const occupied = await target.tableWithData();
    if (occupied && !force) {
      throw new BackupError(`${target.label} already holds data (table ${occupied} has rows); pass --force to replace it with the backup.`);
    }
    if (!force && uploadsHoldFiles(dataDir)) {
      throw new BackupError(`${path.join(dataDir, UPLOADS_ENTRY)} already holds files; pass --force to replace it with the backup's.`);
    }
    await target.checkNotInUse();

    const staging = fs.mkdtempSync(path.join(dataDir, '.restore-'));
    try {
      progress.step(`Reading ${input}`);
      await extractArchive(input, staging, manifest, progress);
      throwIfAborted(opts.signal);
      const dbFile = path.join(staging, manifest.database.path);
      await checkExtracted(input, manifest, dbFile, path.join(staging, UPLOADS_ENTRY));
      const applied = await target.restore(dbFile, manifest, progress, opts.signal);
      replaceUploads(dataDir, manifest.uploads ? path.join(staging, UPLOADS_ENTRY) : null, path.join(staging, 'uploads.replaced'));
      return { manifest, target: target.name, applied };
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  } finally {
    await target.close();
  }
}

function checkManifest(manifest: Manifest, input: string, dialect: Dialect): void {
  if (manifest.dialect !== dialect) {
    const configured = dialect === 'mysql' ? 'DATABASE_URL is set' : 'DATABASE_URL is not set';
    throw new BackupError(
      `${input} is a ${DIALECT_NAME[manifest.dialect]} backup, but this server uses ${DIALECT_NAME[dialect]} (${configured}); ` +
        'restoring from one kind of database into the other is not supported.',
    );
  }
  if (!MIGRATION_NAMES.includes(manifest.migration)) {
    throw new BackupError(
      `${input} holds a database at migration ${manifest.migration} (Parley ${manifest.parley_version}), which this Parley does not know ` +
        `(its latest is ${MIGRATION_NAMES.at(-1)}): restore it with that version of Parley or a newer one.`,
    );
  }
}

async function checkExtracted(input: string, manifest: Manifest, dbFile: string, uploadsDir: string): Promise<void> {
  if (!fs.existsSync(dbFile)) throw new BackupError(`${input} is damaged: it has no ${manifest.database.path}.`);
  const { bytes, sha256 } = await hashFile(dbFile);
  if (bytes !== manifest.database.bytes || sha256 !== manifest.database.sha256) {
    throw new BackupError(`${input} is damaged: ${manifest.database.path} does not match the checksum in its manifest.`);
  }
  const found = countFiles(uploadsDir);
  const expected = manifest.uploads ?? { files: 0, bytes: 0 };
  if (found.files !== expected.files || found.bytes !== expected.bytes) {
    throw new BackupError(
      `${input} is damaged: uploads/ holds ${found.files} files (${found.bytes} bytes), its manifest says ${expected.files} (${expected.bytes} bytes).`,
    );
  }
}

/** The restored database must hold exactly the tables and rows the manifest lists. */
function checkTables(actual: Record<string, number>, manifest: Manifest): void {
  for (const table of new Set([...Object.keys(actual), ...Object.keys(manifest.tables)])) {
    if (actual[table] !== manifest.tables[table]) {
      throw new BackupError(
        `The restored database does not match the backup's manifest: table ${table} has ` +
          `${actual[table] ?? 'no'} rows, the manifest says ${manifest.tables[table] ?? 'it does not exist'}.`,
      );
    }
  }
}

async function migrate(databaseUrl: string | null, sqliteFile?: string): Promise<string[]> {
  const db = createDb({ databaseUrl, dataDir: '' }, sqliteFile);
  try {
    return await migrateLatest(db);
  } finally {
    await db.destroy();
  }
}

/**
 * A restored MariaDB database is a bulk load: its tables' statistics are
 * recomputed (ANALYZE), which InnoDB would otherwise do only as a tenth of
 * each table changes. A freshly loaded database planned with the load's
 * partial statistics answered search with 5× the CPU (bench/results/
 * 2026-12-01-fresh-load.md). The pages the load left unwritten are not
 * waited for (that takes a privileged account, or minutes). It runs after
 * the swap, when the restore is done: a failure here (a server that reports
 * no purge figures, as MySQL) is a warning, never a failed restore.
 */
async function recomputeStatistics(databaseUrl: string, progress: Progress): Promise<void> {
  progress.step("Recomputing the tables' statistics");
  const db = createDb({ databaseUrl, dataDir: '' });
  try {
    const settled = await settleAfterBulkLoad(db, { maxWaitMs: 0 });
    // The unwritten pages are worth a warning: until the server has written them, its first
    // minutes of use are slower.
    progress.warn(
      `statistics of ${settled.analyzed} tables recomputed; ${settled.dirtyPagesAfter} of ${settled.bufferPoolPages} ` +
        'buffer pool pages are still to be written, which the server does in the background (the first minutes may be slower)',
    );
  } catch (err) {
    progress.warn(`the restore is complete, but recomputing statistics failed (${err instanceof Error ? err.message : String(err)})`);
  } finally {
    await db.destroy();
  }
}

interface Target {
  /** The SQLite file, or the MariaDB database's name. */
  name: string;
  /** For messages. */
  label: string;
  tableWithData(): Promise<string | null>;
  checkNotInUse(): Promise<void>;
  /** Loads, checks and migrates the restored copy, then puts it in place. Returns the migrations applied. */
  restore(dbFile: string, manifest: Manifest, progress: Progress, signal?: AbortSignal): Promise<string[]>;
  close(): Promise<void>;
}

class SqliteTarget implements Target {
  readonly name: string;
  readonly label: string;

  constructor(dataDir: string) {
    this.name = sqliteFileOf({ dataDir });
    this.label = this.name;
  }

  async tableWithData() {
    return sqliteTableWithData(this.name);
  }

  async checkNotInUse() {
    releaseSqliteTarget(this.name);
  }

  async restore(dbFile: string, manifest: Manifest, progress: Progress, signal?: AbortSignal) {
    progress.step('Checking the restored database');
    checkTables(inspectSqlite(dbFile).tables, manifest);
    const applied = await migrate(null, dbFile);
    finishSqliteFile(dbFile);
    throwIfAborted(signal);
    // Again at the last moment: a server may have started since the first check.
    releaseSqliteTarget(this.name);
    for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(this.name + suffix, { force: true });
    renameDurably(dbFile, this.name);
    return applied;
  }

  async close() {}
}

class MariadbTarget implements Target {
  readonly name: string;
  readonly label: string;
  private readonly server: MariadbServer;

  constructor(private readonly databaseUrl: string) {
    this.name = mysqlConnectionOptions(databaseUrl).database;
    if (!this.name) throw new BackupError('DATABASE_URL names no database (mysql://user:pass@host:port/DATABASE).');
    this.label = `MariaDB database ${this.name}`;
    this.server = new MariadbServer(databaseUrl);
  }

  tableWithData() {
    return this.server.tableWithData(this.name);
  }

  async checkNotInUse() {
    const sessions = await this.server.otherSessions(this.name);
    if (sessions > 0) {
      throw new BackupError(
        `${this.label} is in use by ${sessions} other session(s) (is Parley running on it?): stop the server before restoring.`,
      );
    }
  }

  /**
   * Loads the dump into a scratch database beside the target, checks and
   * migrates it there, then swaps all its tables into the target at once; the
   * target's previous tables move to a second scratch database, dropped last.
   */
  async restore(dump: string, manifest: Manifest, progress: Progress, signal?: AbortSignal) {
    const scratch = `${this.name.slice(0, 40)}_restore_${crypto.randomBytes(4).toString('hex')}`;
    const old = `${scratch}_old`;
    await this.server.createDatabase(scratch, this.name, this.name);
    try {
      progress.step(`Loading the dump into the scratch database ${scratch}`);
      await loadMariadbDump(this.databaseUrl, scratch, dump, progress, signal);
      progress.step('Checking the restored database');
      const counts: Record<string, number> = {};
      for (const table of await this.server.tables(scratch)) counts[table] = await this.server.countRows(scratch, table);
      checkTables(counts, manifest);
      const applied = await migrate(this.server.urlFor(scratch));
      throwIfAborted(signal);
      if (!(await this.server.exists(this.name))) await this.server.createDatabase(this.name, scratch, this.name);
      await this.server.createDatabase(old, this.name, this.name);
      await this.checkNotInUse();
      await this.server.swapTables(scratch, this.name, old);
      await recomputeStatistics(this.server.urlFor(this.name), progress);
      return applied;
    } finally {
      // After the swap `old` holds the target's previous tables; after a failure `scratch` holds the partial load.
      await this.server.dropDatabase(scratch);
      await this.server.dropDatabase(old);
    }
  }

  close() {
    return this.server.close();
  }
}
