import type { Knex } from 'knex';
import * as m001 from './migrations/001_initial';
import * as m002 from './migrations/002_message_search';
import * as m003 from './migrations/003_exact_keys';
import * as m004 from './migrations/004_api_key_index';
import * as m005 from './migrations/005_sqlite_indexes';
import * as m006 from './migrations/006_audit_log';
import * as m007 from './migrations/007_wide_timestamps';

/**
 * Migrations are TypeScript modules listed here, so the same list runs from
 * dist/ in production and from source under jest (no knex CLI, no ts-node).
 */
const MIGRATIONS: Record<string, { up(k: Knex): Promise<void>; down(k: Knex): Promise<void> }> = {
  '001_initial': m001,
  '002_message_search': m002,
  '003_exact_keys': m003,
  '004_api_key_index': m004,
  '005_sqlite_indexes': m005,
  '006_audit_log': m006,
  '007_wide_timestamps': m007,
};

const source: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name]!,
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]];
  return applied;
}

export async function rollbackAll(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource: source }, true);
}
