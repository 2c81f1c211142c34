import crypto from 'node:crypto';
import fs from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import knexFactory, { Knex } from 'knex';
import { mysqlConnectionOptions } from '../connection';
import { DumpScanner } from './dump-scanner';
import { BackupError } from './errors';
import { runClient, writeClientOptions } from './mariadb-client';
import type { Progress } from './progress';

export interface DumpResult {
  tables: Record<string, number>;
  migration: string;
  bytes: number;
  sha256: string;
}

/**
 * Dumps the database DATABASE_URL names into `dest` with mariadb-dump.
 * --single-transaction reads every table in one REPEATABLE READ transaction
 * (a consistent snapshot, InnoDB's MVCC: writers are not blocked and no table
 * is locked); --hex-blob keeps binary columns exact; --routines and
 * --triggers keep any stored code. No CREATE DATABASE or USE: a dump restores
 * into whatever database the target names.
 */
export async function dumpMariadb(databaseUrl: string, dest: string, progress: Progress, signal?: AbortSignal): Promise<DumpResult> {
  const { database } = mysqlConnectionOptions(databaseUrl);
  if (!database) throw new BackupError('DATABASE_URL names no database (mysql://user:pass@host:port/DATABASE).');
  const scanner = new DumpScanner();
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      scanner.push(chunk);
      hash.update(chunk);
      bytes += chunk.length;
      progress.advance(bytes, null, 'bytes');
      done(null, chunk);
    },
  });
  const client = writeClientOptions(databaseUrl);
  try {
    await runClient(
      'mariadb-dump',
      [
        client.defaultsArg,
        '--single-transaction',
        '--routines',
        '--triggers',
        '--hex-blob',
        '--no-tablespaces',
        '--default-character-set=utf8mb4',
        database,
      ],
      { drain: (stdout) => pipeline(stdout, tap, fs.createWriteStream(dest, { mode: 0o600 })), signal },
    );
  } finally {
    client.cleanup();
  }
  const summary = scanner.finish();
  // mariadb-dump writes this line last; without it the dump is cut short.
  if (!summary.completed) throw new BackupError('mariadb-dump stopped before the end of the dump.');
  const migration = [...summary.migrations].sort().at(-1);
  if (!migration) throw new BackupError(`Database ${database} is not a Parley database (it has no applied migrations).`);
  return { tables: summary.tables, migration, bytes, sha256: hash.digest('hex') };
}

/** Loads a dump into `database` (on the server DATABASE_URL names) with the mariadb client. */
export async function loadMariadbDump(
  databaseUrl: string,
  database: string,
  dump: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<void> {
  const total = fs.statSync(dump).size;
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      progress.advance(bytes, total, 'bytes');
      done(null, chunk);
    },
  });
  const client = writeClientOptions(databaseUrl);
  try {
    await runClient('mariadb', [client.defaultsArg, '--default-character-set=utf8mb4', database], {
      feed: (stdin) => pipeline(fs.createReadStream(dump), tap, stdin),
      signal,
    });
  } finally {
    client.cleanup();
  }
}

/**
 * Statements on the MariaDB server itself, across databases: a restore loads
 * into a scratch database and then swaps its tables into the target.
 */
export class MariadbServer {
  private readonly db: Knex;

  constructor(private readonly databaseUrl: string) {
    const { database: _ignored, ...connection } = mysqlConnectionOptions(databaseUrl);
    this.db = knexFactory({ client: 'mysql2', connection, pool: { min: 0, max: 1 } });
  }

  /** DATABASE_URL with another database name. */
  urlFor(database: string): string {
    const u = new URL(this.databaseUrl);
    u.pathname = `/${encodeURIComponent(database)}`;
    return u.toString();
  }

  close(): Promise<void> {
    return this.db.destroy();
  }

  async exists(database: string): Promise<boolean> {
    return (await this.rows('SELECT schema_name FROM information_schema.schemata WHERE schema_name = ?', [database])).length > 0;
  }

  async tables(database: string): Promise<string[]> {
    const rows = await this.rows<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE'`,
      [database],
    );
    return rows.map((r) => r.name).sort();
  }

  /** The first table (not Parley's migration bookkeeping) with a row, or null. */
  async tableWithData(database: string): Promise<string | null> {
    if (!(await this.exists(database))) return null;
    for (const table of await this.tables(database)) {
      if (table.startsWith('knex_migrations')) continue;
      if ((await this.rows(`SELECT 1 FROM ${qi(database)}.${qi(table)} LIMIT 1`)).length) return table;
    }
    return null;
  }

  async countRows(database: string, table: string): Promise<number> {
    const [row] = await this.rows<{ n: number | string }>(`SELECT count(*) AS n FROM ${qi(database)}.${qi(table)}`);
    return Number(row!.n);
  }

  /**
   * Other sessions using `database` (a running Parley server). A user without
   * the PROCESS privilege sees only its own sessions, which is where a server
   * running under the same account shows up.
   */
  async otherSessions(database: string): Promise<number> {
    const [row] = await this.rows<{ n: number | string }>(
      'SELECT count(*) AS n FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()',
      [database],
    );
    return Number(row!.n);
  }

  /**
   * Creates `database` with the character set and collation of `like`
   * (utf8mb4_unicode_ci when that does not exist). `target` is the database
   * being restored, for the message when the user may not create databases.
   */
  async createDatabase(database: string, like: string, target: string): Promise<void> {
    const [row] = await this.rows<{ cs: string; co: string }>(
      'SELECT default_character_set_name AS cs, default_collation_name AS co FROM information_schema.schemata WHERE schema_name = ?',
      [like],
    );
    try {
      await this.db.raw(`CREATE DATABASE ${qi(database)} CHARACTER SET ${row?.cs ?? 'utf8mb4'} COLLATE ${row?.co ?? 'utf8mb4_unicode_ci'}`);
    } catch (err) {
      if ((err as { errno?: number }).errno === 1044) {
        throw new BackupError(
          `This MariaDB user may not create the database ${database}. A restore loads into scratch databases named ` +
            `${target}_restore_…, checked, swapped in and dropped: grant the user ALL on \`${target}\\_restore\\_%\`.* as well as on ${target}.`,
        );
      }
      throw err;
    }
  }

  async dropDatabase(database: string): Promise<void> {
    await this.db.raw(`DROP DATABASE IF EXISTS ${qi(database)}`);
  }

  /**
   * Moves the target's tables (if any) into `old` and every table of
   * `scratch` into the target, in one RENAME TABLE: MariaDB renames all of
   * them or none, and foreign keys follow their tables. (The target's tables
   * cannot go into `scratch`: foreign-key names are unique per database, and
   * the scratch copy's tables still carry the same ones.)
   */
  async swapTables(scratch: string, target: string, old: string): Promise<void> {
    const moves: string[] = [];
    for (const t of await this.tables(target)) moves.push(`${qi(target)}.${qi(t)} TO ${qi(old)}.${qi(t)}`);
    for (const t of await this.tables(scratch)) moves.push(`${qi(scratch)}.${qi(t)} TO ${qi(target)}.${qi(t)}`);
    await this.db.raw(`RENAME TABLE ${moves.join(', ')}`);
  }

  private async rows<T = Record<string, unknown>>(sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
    const result = (await this.db.raw(sql, bindings as Knex.RawBinding[])) as [T[], unknown];
    return result[0];
  }
}

/** A quoted identifier. */
function qi(name: string): string {
  return '`' + name.replace(/`/g, '``') + '`';
}
