import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { createDb, mysqlConnectionOptions } from '../../src/db/connection';
import { migrateLatest } from '../../src/db/migrate';
import { createMysqlDatabase } from './mysql-databases';

/**
 * Migrating a database from nothing runs 262 statements: 0.3 s on SQLite,
 * 7–10 s on MariaDB, where each is an InnoDB dictionary change (ALTERs that
 * rebuild tables, foreign keys added one by one). The suite makes hundreds of
 * databases, so the migrations build one template per database engine and
 * every fresh test database is a copy of it: the SQLite file copied, or the
 * template's tables created again from SHOW CREATE TABLE in one round trip
 * (about 1 s). test/template-databases.test.ts holds a copy's schema to a
 * migrated database's; the migrations themselves still run on both engines
 * (here, and in the tests that migrate step by step).
 *
 * A jest run builds its templates once, before any worker starts
 * (test/global-setup.js runs test/support/build-templates.ts): jest gives every
 * test file a module registry of its own, so a template held in this module
 * would be built again for each file (7–10 s of each MariaDB file's time, and
 * inside its first hook's timeout). The built templates are files in the
 * run's directory: the SQLite database, and the MariaDB script. Outside such a
 * run (or when the run could not build one) this process builds its own, once
 * per test file, as before.
 *
 * Templates are named after the jest run (PARLEY_TEST_RUN, set by
 * test/global-setup.js), and test/global-teardown.js removes the run's templates.
 */
const run = process.env.PARLEY_TEST_RUN ?? String(process.pid);

/** The run's directory: its SQLite templates and the MariaDB template's script (test/global-teardown.js removes it). */
export function sqliteTemplateDir(runId: string): string {
  return path.join(os.tmpdir(), `parley-test-templates-${runId}`);
}

/** Where the run's templates are, once test/support/build-templates.ts has built them. */
export function runTemplateFiles(runId: string): { sqlite: string; mysqlScript: string; castPasswordHash: string } {
  const dir = sqliteTemplateDir(runId);
  return {
    sqlite: path.join(dir, 'run', 'parley.sqlite3'),
    mysqlScript: path.join(dir, 'mysql-template.sql'),
    castPasswordHash: path.join(dir, 'cast-password-hash'),
  };
}

/** A template that failed to build is built again by the next caller, not failed forever. */
function retryable<T>(making: Promise<T>, forget: () => void): Promise<T> {
  return making.catch((err: unknown) => {
    forget();
    throw err;
  });
}

let sqliteTemplate: Promise<string> | undefined;

/** Migrates a SQLite database in `dir` (emptied first) and returns its file. */
export async function makeSqliteTemplate(dir = path.join(sqliteTemplateDir(run), String(process.pid))): Promise<string> {
  fs.rmSync(dir, { recursive: true, force: true });
  const db = createDb({ databaseUrl: null, dataDir: dir });
  await migrateLatest(db);
  // Closing the last connection checkpoints the WAL into the file and removes
  // it, so the file alone is the whole database.
  await db.destroy();
  return path.join(dir, 'parley.sqlite3');
}

function sqliteTemplateFile(): Promise<string> {
  const built = runTemplateFiles(run).sqlite;
  if (fs.existsSync(built)) return Promise.resolve(built);
  return (sqliteTemplate ??= retryable(makeSqliteTemplate(), () => (sqliteTemplate = undefined)));
}

/** Writes a migrated SQLite database at `file`. */
export async function copySqliteTemplate(file: string): Promise<void> {
  fs.copyFileSync(await sqliteTemplateFile(), file);
}

let mysqlTemplate: Promise<string> | undefined;

/** The name every run's MySQL templates start with (test/global-teardown.js drops them). */
export function mysqlTemplatePrefix(runId: string): string {
  return `parley_tpl_${runId}_`;
}

/**
 * Migrates the MySQL template `name` (made again if it exists) on the server
 * of `baseUrl`; returns every table's CREATE statement, and the migrations'
 * records, as one script that runs with foreign key checks off.
 */
export async function makeMysqlTemplate(baseUrl: string, name = `${mysqlTemplatePrefix(run)}${process.pid}`): Promise<string> {
  const template = await createMysqlDatabase(baseUrl, name, { replace: true });
  const { admin } = template;
  try {
    const db = createDb({ databaseUrl: template.url, dataDir: '' });
    try {
      await migrateLatest(db);
    } finally {
      await db.destroy();
    }
    const [tables] = (await admin.raw(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name`,
      [name],
    )) as [Array<{ name: string }>];
    const statements = ['SET FOREIGN_KEY_CHECKS = 0'];
    for (const { name: table } of tables) {
      const [[created]] = (await admin.raw(`SHOW CREATE TABLE \`${name}\`.\`${table}\``)) as [Array<{ 'Create Table': string }>];
      // A table's next AUTO_INCREMENT value is state, not schema: a copy starts at 1.
      statements.push(String(created!['Create Table']).replace(/ AUTO_INCREMENT=\d+/, ''));
      const [[count]] = (await admin.raw(`SELECT COUNT(*) AS n FROM \`${name}\`.\`${table}\``)) as [Array<{ n: number }>];
      // The migrations' own bookkeeping (knex_migrations, its lock row) is the only data.
      if (Number(count!.n) > 0) statements.push(`INSERT INTO \`${table}\` SELECT * FROM \`${name}\`.\`${table}\``);
    }
    statements.push('SET FOREIGN_KEY_CHECKS = 1');
    return statements.join(';\n');
  } finally {
    await template.close();
  }
}

function mysqlTemplateScript(url: string): Promise<string> {
  const built = runTemplateFiles(run).mysqlScript;
  if (fs.existsSync(built)) return Promise.resolve(fs.readFileSync(built, 'utf8'));
  return (mysqlTemplate ??= retryable(makeMysqlTemplate(url), () => (mysqlTemplate = undefined)));
}

/**
 * The run's hash of the test cast's password (test/support/server.ts), made
 * once with the production parameters; null outside such a run.
 */
export function runCastPasswordHash(): string | null {
  const file = runTemplateFiles(run).castPasswordHash;
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
}

/** Fills the empty MySQL database at `url` with the tables (and migration records) of a migrated one. */
export async function copyMysqlTemplate(url: string): Promise<void> {
  const script = await mysqlTemplateScript(url);
  const conn = await mysql.createConnection({ ...mysqlConnectionOptions(url), multipleStatements: true });
  try {
    await conn.query(script);
  } finally {
    await conn.end();
  }
}
