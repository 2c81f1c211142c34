import fs from 'node:fs';
import Database from '@rocicorp/zero-sqlite3';
import { BackupError, throwIfAborted } from './errors';
import { fsyncPath } from './files';
import type { Progress } from './progress';

/** What a snapshot holds: rows per table and the latest applied migration. */
export interface DatabaseContents {
  tables: Record<string, number>;
  migration: string | null;
}

/** Pages copied per backup step (4 MiB at SQLite's default page size): progress shows between steps. */
const STEP_PAGES = 1024;

/**
 * Copies the live database at `source` into `dest` with SQLite's online
 * backup API, from a connection of its own, while the server keeps writing.
 *
 * A stepped backup restarts from the first page whenever another connection
 * writes, so under steady traffic it may never finish. Holding a read
 * transaction on the source connection across all the steps pins one
 * snapshot instead: in WAL mode writers do not wait for readers, the copy is
 * the database as of the BEGIN, and it never restarts (the WAL only grows
 * until the copy ends and the server's next checkpoint).
 */
export async function snapshotSqlite(source: string, dest: string, progress: Progress, signal?: AbortSignal): Promise<DatabaseContents> {
  if (!fs.existsSync(source)) throw new BackupError(`No SQLite database at ${source} (check DATA_DIR).`);
  const src = new Database(source, { fileMustExist: true, timeout: 5000 });
  try {
    src.exec('BEGIN');
    src.prepare('SELECT count(*) FROM sqlite_schema').get(); // starts the read transaction now
    await src.backup(dest, {
      progress: ({ totalPages, remainingPages }) => {
        throwIfAborted(signal);
        progress.advance(totalPages - remainingPages, totalPages, 'pages');
        return STEP_PAGES;
      },
    });
    src.exec('COMMIT');
  } finally {
    src.close();
  }
  const copy = new Database(dest, { fileMustExist: true });
  try {
    // The copy carries the source's WAL flag; as DELETE it is one self-contained file.
    copy.pragma('journal_mode = DELETE');
    checkIntegrity(copy, 'The copied database');
    const contents = contentsOf(copy);
    if (!contents.migration) throw new BackupError(`${source} is not a Parley database (it has no applied migrations).`);
    return contents;
  } finally {
    copy.close();
  }
}

/** A restored copy: its integrity and rows per table, before it replaces anything. */
export function inspectSqlite(file: string): DatabaseContents {
  const db = new Database(file, { fileMustExist: true });
  try {
    checkIntegrity(db, 'The database in the archive');
    return contentsOf(db);
  } finally {
    db.close();
  }
}

/** Leaves a database file self-contained (no -wal beside it) and on disk. */
export function finishSqliteFile(file: string): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
  } finally {
    db.close();
  }
  fsyncPath(file);
}

/** The first table (not Parley's migration bookkeeping) with a row, or null when the database is empty or absent. */
export function sqliteTableWithData(file: string): string | null {
  if (!fs.existsSync(file)) return null;
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { fileMustExist: true, readonly: true, timeout: 5000 });
    for (const table of userTables(db, ['table'])) {
      if (table.startsWith('knex_migrations')) continue;
      if (db.prepare(`SELECT 1 FROM ${quoteName(table)} LIMIT 1`).get()) return table;
    }
    return null;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      throw new BackupError(`${file} is not a readable SQLite database (${(err as Error).message}); move it away to restore here.`);
    }
    throw err;
  } finally {
    db?.close();
  }
}

/**
 * Makes sure no one else has `file` open, and folds its WAL into it so the
 * file can be replaced. Switching a WAL database to DELETE mode needs every
 * other connection closed, so it fails (SQLITE_BUSY) while a server runs on it.
 */
export function releaseSqliteTarget(file: string): void {
  if (!fs.existsSync(file)) return;
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 1000 });
    db.pragma('journal_mode = DELETE');
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new BackupError(`${file} is in use (is Parley running on it?): stop the server before restoring.`);
    }
    throw err;
  } finally {
    db?.close();
  }
}

function checkIntegrity(db: Database.Database, what: string): void {
  const result = db.pragma('quick_check', { simple: true });
  if (result !== 'ok') throw new BackupError(`${what} fails SQLite's integrity check: ${String(result)}.`);
}

function contentsOf(db: Database.Database): DatabaseContents {
  const tables: Record<string, number> = {};
  // FTS5 keeps its index in shadow tables: counted, as data the archive carries.
  for (const table of userTables(db, ['table', 'shadow'])) {
    tables[table] = db
      .prepare(`SELECT count(*) FROM ${quoteName(table)}`)
      .pluck()
      .get() as number;
  }
  const migration =
    'knex_migrations' in tables ? ((db.prepare('SELECT max(name) FROM knex_migrations').pluck().get() as string | null) ?? null) : null;
  return { tables, migration };
}

function userTables(db: Database.Database, types: string[]): string[] {
  const rows = db.prepare(`SELECT name, type FROM pragma_table_list WHERE schema = 'main'`).all() as Array<{ name: string; type: string }>;
  return rows
    .filter((r) => types.includes(r.type) && !r.name.startsWith('sqlite_'))
    .map((r) => r.name)
    .sort();
}

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
