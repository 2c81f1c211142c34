import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { dialectOf } from '../../src/db/connection';
import { rawRows } from '../../src/queries/rows';

/** One table's content, reduced to what a comparison needs. */
export interface TableDigest {
  rows: number;
  sha256: string;
}

/** Every base table of the database (both dialects), sorted by name. */
export async function listTables(db: Knex): Promise<string[]> {
  const rows =
    dialectOf(db) === 'sqlite'
      ? await db.raw(`SELECT name AS name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
      : await db.raw(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'`,
        );
  return rawRows<{ name: string }>(rows)
    .map((r) => r.name)
    .sort();
}

/**
 * Each table's rows as sorted JSON lines: two databases (or one database at
 * two moments) hold the same data exactly when these are equal. Row order is
 * not part of the comparison; column values are (Buffers as hex).
 */
export async function tableLines(db: Knex, table: string): Promise<string[]> {
  const rows: Record<string, unknown>[] = await db(table).select('*');
  return rows.map((r) => JSON.stringify(normalizeRow(r))).sort();
}

/** A digest of every table: {table: {rows, sha256}}. */
export async function snapshotDigest(db: Knex, skip: ReadonlySet<string> = new Set()): Promise<Record<string, TableDigest>> {
  const out: Record<string, TableDigest> = {};
  for (const table of await listTables(db)) {
    if (skip.has(table)) continue;
    const lines = await tableLines(db, table);
    out[table] = { rows: lines.length, sha256: crypto.createHash('sha256').update(lines.join('\n')).digest('hex') };
  }
  return out;
}

function normalizeRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(row).sort()) {
    const v = row[key];
    out[key] = Buffer.isBuffer(v) ? v.toString('hex') : v instanceof Date ? v.toISOString() : typeof v === 'boolean' ? Number(v) : v;
  }
  return out;
}
