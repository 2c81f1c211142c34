import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb, Dialect } from '../../src/db/connection';
import { createMysqlDatabase } from './mysql-databases';
import { copyMysqlTemplate, copySqliteTemplate } from './template-databases';

/** MySQL/MariaDB for tests: TEST_MYSQL_URL=mysql://user:pass@127.0.0.1:3307 (a user who may create databases). */
export const MYSQL_URL = process.env.TEST_MYSQL_URL?.trim() || null;

/** ONLY_MYSQL=1 runs just the MySQL half (make test runs the suite once per database). */
export const DIALECTS: Dialect[] = process.env.ONLY_MYSQL ? ['mysql'] : MYSQL_URL ? ['sqlite', 'mysql'] : ['sqlite'];

/** Runs a suite once per configured database: always SQLite, and MySQL when TEST_MYSQL_URL is set. */
export function eachDatabase(name: string, suite: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) describe(`${name} [${dialect}]`, () => suite(dialect));
}

export interface TestDb {
  db: Knex;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database: a SQLite file in a directory of its own (a file,
 * not :memory:, so that reads outside transactions go to the read-only
 * connections as they do in production), or a new MySQL database; dropped afterwards.
 * It is a copy of this worker's migrated template (test/support/template-databases.ts).
 */
export async function freshDatabase(dialect: Dialect): Promise<TestDb> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-db-'));
    await copySqliteTemplate(path.join(dir, 'parley.sqlite3'));
    const db = createDb({ databaseUrl: null, dataDir: dir });
    return {
      db,
      drop: async () => {
        await db.destroy();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const mysql = await freshMysqlDatabase();
  await copyMysqlTemplate(mysql.url);
  const db = createDb({ databaseUrl: mysql.url, dataDir: '' });
  return {
    db,
    drop: async () => {
      await db.destroy();
      await mysql.drop();
    },
  };
}

/**
 * A new MySQL database, already migrated (a copy of the run's template), for
 * tests that start Parley processes on it: a process's first start would
 * otherwise migrate it, 7–10 s of the test's time on MariaDB and more on a
 * loaded machine. Its start then finds nothing to migrate and seeds the demo
 * organization as on an empty one (the migrations' own run is tested where
 * it is the subject: test/cli.test.ts, test/backup.test.ts, template-databases).
 */
export async function freshMigratedMysqlDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const mysql = await freshMysqlDatabase();
  try {
    await copyMysqlTemplate(mysql.url);
  } catch (err) {
    await mysql.drop();
    throw err;
  }
  return mysql;
}

/** A new, empty MySQL database on TEST_MYSQL_URL's server: its name, its DATABASE_URL, and how to drop it. */
export async function freshMysqlDatabase(
  name = `parley_test_${crypto.randomBytes(5).toString('hex')}`,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const { url, drop } = await createMysqlDatabase(MYSQL_URL!, name);
  return { name, url, drop };
}
