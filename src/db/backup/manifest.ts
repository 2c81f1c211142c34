import fs from 'node:fs';
import path from 'node:path';
import type { Dialect } from '../connection';
import { BackupError } from './errors';

/**
 * manifest.json, the first entry of every backup archive: what the archive
 * holds and how to check it. A restore reads it before anything else, so a
 * wrong dialect or an unknown schema is refused before any data moves.
 */
export interface Manifest {
  format: typeof FORMAT;
  /** Bumped when the archive layout changes; a restore refuses versions it does not know. */
  format_version: number;
  dialect: Dialect;
  /** The latest migration applied to the database when it was copied. */
  migration: string;
  /** ISO 8601, UTC: when the database snapshot was taken. */
  created_at: string;
  parley_version: string;
  /** Rows per table in the snapshot; a restore checks the restored database against them. */
  tables: Record<string, number>;
  /** The database entry of the archive, with its size and SHA-256. */
  database: { path: string; bytes: number; sha256: string };
  /** DATA_DIR/uploads, when it existed: its regular files and their total size. */
  uploads: { files: number; bytes: number } | null;
}

export const FORMAT = 'parley-backup';
export const FORMAT_VERSION = 1;

/** Entry names inside the archive. */
export const MANIFEST_ENTRY = 'manifest.json';
export const DATABASE_ENTRY: Record<Dialect, string> = {
  sqlite: 'database/parley.sqlite3',
  mysql: 'database/mariadb.sql',
};
export const UPLOADS_ENTRY = 'uploads';

export const DIALECT_NAME: Record<Dialect, string> = { sqlite: 'SQLite', mysql: 'MariaDB' };

/** Parses and checks manifest.json; `source` names the archive in errors. */
export function parseManifest(text: string, source: string): Manifest {
  let m: Partial<Manifest>;
  try {
    m = JSON.parse(text) as Partial<Manifest>;
  } catch {
    throw new BackupError(`${source} is not a Parley backup (its manifest.json is not JSON).`);
  }
  if (m?.format !== FORMAT) throw new BackupError(`${source} is not a Parley backup (unknown manifest format).`);
  if (m.format_version !== FORMAT_VERSION) {
    throw new BackupError(`${source} has backup format version ${m.format_version}; this Parley reads version ${FORMAT_VERSION}.`);
  }
  const ok =
    (m.dialect === 'sqlite' || m.dialect === 'mysql') &&
    typeof m.migration === 'string' &&
    typeof m.created_at === 'string' &&
    typeof m.tables === 'object' &&
    m.tables !== null &&
    Object.values(m.tables).every((n) => Number.isInteger(n) && n >= 0) &&
    typeof m.database?.path === 'string' &&
    m.database.path === DATABASE_ENTRY[m.dialect] &&
    Number.isInteger(m.database.bytes) &&
    /^[0-9a-f]{64}$/.test(m.database.sha256 ?? '') &&
    (m.uploads === null || (Number.isInteger(m.uploads?.files) && Number.isInteger(m.uploads?.bytes)));
  if (!ok) throw new BackupError(`${source} is not a Parley backup (its manifest.json is incomplete).`);
  return m as Manifest;
}

let version: string | null = null;
/** This code's version, from the package.json above it (src/ under jest, dist/src/ when built). */
export function parleyVersion(): string {
  if (version) return version;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'parley' && pkg.version) return (version = pkg.version);
    }
    if (path.dirname(dir) === dir) return (version = 'unknown');
  }
}
