import fs from 'node:fs';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { createDb, sqliteFileOf } from './connection';

/** MariaDB's ER_BAD_DB_ERROR: the database DATABASE_URL names does not exist. */
const UNKNOWN_DATABASE = 1049;

/**
 * Whether the configured database is a Parley database (a migration was
 * applied to it), found without creating anything: for SQLite, opening a
 * missing file would create it, so its absence is the answer; a MariaDB
 * database that does not exist, or holds no Parley tables, is no Parley
 * database either. The command line refuses to work on one, where it would
 * otherwise make an empty database and report "no organization".
 */
export async function isParleyDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<boolean> {
  if (!config.databaseUrl && !fs.existsSync(sqliteFileOf(config))) return false;
  const db = createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, dbPoolMax: 1, sqliteReaders: 0 });
  try {
    return await hasAppliedMigrations(db);
  } catch (err) {
    if ((err as { errno?: unknown }).errno === UNKNOWN_DATABASE) return false;
    throw err;
  } finally {
    await db.destroy();
  }
}

async function hasAppliedMigrations(db: Knex): Promise<boolean> {
  if (!(await db.schema.hasTable('knex_migrations'))) return false;
  const row = (await db('knex_migrations').count({ n: '*' }).first()) as { n: unknown } | undefined;
  return Number(row?.n ?? 0) > 0;
}
