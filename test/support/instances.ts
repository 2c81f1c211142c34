import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb, Dialect } from '../../src/db/connection';
import { freshMysqlDatabase } from './databases';

/**
 * A Parley installation as the CLI sees it: a DATA_DIR of its own and, for
 * MySQL, a database of its own (created empty; nothing is migrated here).
 */
export interface Instance {
  dataDir: string;
  databaseUrl: string | null;
  env: { DATA_DIR: string; DATABASE_URL: string | null };
  /** A knex handle on the instance's database (SQLite: DATA_DIR/parley.sqlite3); closed by drop(). */
  open(): Knex;
  drop(): Promise<void>;
}

export async function newInstance(dialect: Dialect): Promise<Instance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-instance-'));
  const mysql = dialect === 'mysql' ? await freshMysqlDatabase() : null;
  const databaseUrl = mysql?.url ?? null;
  const handles: Knex[] = [];
  return {
    dataDir,
    databaseUrl,
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    open() {
      const db = createDb({ databaseUrl, dataDir });
      handles.push(db);
      return db;
    },
    async drop() {
      for (const db of handles) await db.destroy();
      await mysql?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
