import type { Knex } from 'knex';

/**
 * The id of a single-row insert. better-sqlite3 and mysql2 both return [id]
 * for one row (they disagree for batches, so batches re-select by key).
 */
export async function insertOne(q: Knex | Knex.Transaction, table: string, row: Record<string, unknown>): Promise<number> {
  const result = await q(table).insert(row);
  const first = (result as unknown[])[0];
  return typeof first === 'object' && first !== null ? Number((first as { id: number }).id) : Number(first);
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Runs a query per slice of a long list: SQLite allows at most 32,766 bound variables per statement. */
export async function inChunks<T, K = number>(ids: readonly K[], run: (slice: K[]) => Promise<T[]>, size = 5000): Promise<T[]> {
  if (ids.length <= size) return run([...ids]);
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += size) out.push(...(await run(ids.slice(i, i + size))));
  return out;
}
