import type { Knex } from 'knex';
import { dialectOf } from './connection';

/**
 * Whether the server is a Galera node (`wsrep_on`), asked once per pool: only
 * there can a read on one node miss a commit the cluster has already accepted.
 */
const galera = new WeakMap<Knex, Promise<boolean>>();

function isGalera(db: Knex): Promise<boolean> {
  let known = galera.get(db);
  if (!known) {
    known = db
      .raw("SHOW VARIABLES LIKE 'wsrep_on'")
      .then((r: unknown) => {
        const rows = (r as [Array<{ Value?: string }>])[0];
        return String(rows[0]?.Value ?? 'OFF').toUpperCase() === 'ON';
      })
      .catch((err: unknown) => {
        // Not known yet (the database may be failing over): ask again next time.
        galera.delete(db);
        throw err;
      });
    galera.set(db, known);
  }
  return known;
}

/**
 * Runs a read that sees every transaction committed anywhere in the cluster
 * before it started. On Galera a node applies other nodes' write sets
 * asynchronously, so a plain read there may not yet see a commit the cluster
 * has accepted; `wsrep_sync_wait = 1` makes the node catch up first. It is set
 * for this statement alone (MariaDB's SET STATEMENT), so the pooled
 * connection keeps its session defaults. Elsewhere it is a plain read.
 */
export async function causalRead<T>(db: Knex, query: Knex.QueryBuilder, timeoutMs = CAUSAL_READ_TIMEOUT_MS): Promise<T[]> {
  // The read has a time limit of its own: its caller is deciding a request's
  // outcome, and a node that neither answers nor drops the connection would
  // otherwise hold that request for as long as the socket stays open. Past
  // the limit knex kills the statement (KILL QUERY) and the read fails.
  if (dialectOf(db) !== 'mysql' || !(await isGalera(db))) return (await query.timeout(timeoutMs, { cancel: true })) as T[];
  const { sql, bindings } = query.toSQL().toNative();
  const [rows] = (await db
    .raw(`SET STATEMENT wsrep_sync_wait = 1 FOR ${sql}`, bindings as Knex.RawBinding[])
    .timeout(timeoutMs, { cancel: true })) as unknown as [T[]];
  return rows;
}

/** Longer than a causal read takes on a cluster catching up, shorter than the 8 s a transaction waits for the database. */
export const CAUSAL_READ_TIMEOUT_MS = 3000;
