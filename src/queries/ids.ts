import type { Knex } from 'knex';
import type { TableInsert, TableName } from '../../generated/tables';

/**
 * A row's id as later writes of its transaction name it: a number, or a new
 * row's, which on MySQL/MariaDB may be known only once its held insert is
 * answered (src/db/held-writes.ts, ADR 0026, ADR 0034).
 */
export type { NewId } from '../db/held-writes';

/**
 * The id of a single-row insert. better-sqlite3 and mysql2 both return [id]
 * for one row (they disagree for batches, so batches re-select by key).
 */
export async function insertOne<T extends TableName>(q: Knex | Knex.Transaction, table: T, row: Readonly<TableInsert<T>>): Promise<number> {
  // knex's insert type is conditional on the table and does not resolve for a generic one: the
  // signature above checks the row against the table, so the call itself is left unchecked.
  const result = await q(table).insert(row as never);
  const first = (result as unknown[])[0];
  return typeof first === 'object' && first !== null ? Number((first as { id: number }).id) : Number(first);
}

/**
 * knex writes a multi-row INSERT for SQLite as one compound SELECT, and SQLite
 * allows at most 500 terms in one: longer lists are inserted in slices.
 */
export const MAX_ROWS_PER_INSERT = 500;

/** Inserts rows in statements of at most MAX_ROWS_PER_INSERT; with `ignoreConflictOn`, rows clashing on that key are skipped. */
export async function insertRows<T extends TableName>(
  q: Knex | Knex.Transaction,
  table: T,
  rows: ReadonlyArray<TableInsert<T>>,
  ignoreConflictOn?: string[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += MAX_ROWS_PER_INSERT) {
    const insert = q(table).insert(rows.slice(i, i + MAX_ROWS_PER_INSERT) as never);
    await (ignoreConflictOn ? insert.onConflict(ignoreConflictOn).ignore() : insert);
  }
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Runs a query per slice of a long list: SQLite allows at most 32,766 bound variables per statement. */
export async function inChunks<T, K = number>(ids: readonly K[], run: (slice: K[]) => Promise<T[]>, size = 5000): Promise<T[]> {
  if (ids.length <= size) return run([...ids]);
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += size) out.push(...(await run(ids.slice(i, i + size))));
  return out;
}
