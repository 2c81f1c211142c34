import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

export interface StoredInvalidation {
  id: number;
  payload: string;
}

/** Records invalidations (JSON text) for the running servers, and deletes those older than `pruneBefore`. */
export async function insertCacheInvalidations(q: Q, payloads: readonly string[], now: number, pruneBefore: number): Promise<void> {
  if (payloads.length) await q('cache_invalidations').insert(payloads.map((payload) => ({ created_at: now, payload })));
  await q('cache_invalidations').where('created_at', '<', pruneBefore).delete();
}

/** The newest recorded id (0 when there is none): where a starting server begins reading. */
export async function getLastCacheInvalidationId(q: Q): Promise<number> {
  const row: { id: number | string | null } | undefined = await q('cache_invalidations').max('id as id').first();
  return Number(row?.id ?? 0);
}

/** Invalidations recorded after `afterId`, oldest first. */
export async function listCacheInvalidationsAfter(q: Q, afterId: number, limit: number): Promise<StoredInvalidation[]> {
  const rows: Array<{ id: number | string; payload: string }> = await q('cache_invalidations')
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .select('id', 'payload');
  return rows.map((r) => ({ id: Number(r.id), payload: String(r.payload) }));
}
