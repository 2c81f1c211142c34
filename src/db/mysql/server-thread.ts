import type { Knex } from 'knex';

/**
 * Which server thread each pooled MySQL/MariaDB connection is, so that a
 * transaction whose connection died during COMMIT can be proven not to have
 * committed (ADR 0026, "Dead connections"). The server runs a connection's
 * statements on a thread of its own; once that thread is gone, its
 * transaction has either committed or been rolled back for good, and a
 * witness read on the same server tells which.
 */

/** A server as far as a thread id means something on it: the same host, port and id, started at the same time. */
export interface ServerIdentity {
  host: string;
  port: number;
  serverId: number;
  /** When it started (seconds since the epoch, from its uptime): thread ids start again after a restart. */
  startedAt: number;
}

export interface ServerThread {
  id: number;
  server: ServerIdentity;
}

/**
 * Read in the packet that sets a new connection's session (src/db/connection.ts):
 * one round trip per connection, none per transaction. CONNECTION_ID() rather
 * than the handshake's thread id: a proxy may answer the handshake itself.
 */
export const IDENTIFY_SQL =
  "SELECT CONNECTION_ID() AS id, @@hostname AS host, @@port AS port, @@server_id AS server_id, UNIX_TIMESTAMP() AS now; SHOW GLOBAL STATUS LIKE 'Uptime'";

const threads = new WeakMap<object, ServerThread>();

/**
 * Records a new connection's thread from the answers to IDENTIFY_SQL (the
 * last two results of its packet). An answer it cannot read leaves the
 * connection unknown: a COMMIT lost on it stays unknown too.
 */
export function rememberThread(connection: object, results: unknown): void {
  if (!Array.isArray(results) || results.length < 2) return;
  const [identity] = results[results.length - 2] as Array<Record<string, unknown>>;
  const [uptime] = results[results.length - 1] as Array<Record<string, unknown>>;
  const id = Number(identity?.id);
  const server: ServerIdentity = {
    host: String(identity?.host ?? ''),
    port: Number(identity?.port),
    serverId: Number(identity?.server_id),
    startedAt: Number(identity?.now) - Number(uptime?.Value),
  };
  if (!Number.isSafeInteger(id) || id <= 0 || !Number.isFinite(server.startedAt) || !Number.isFinite(server.port)) return;
  threads.set(connection, { id, server });
}

/** The thread a transaction runs on (MySQL/MariaDB), if its connection was identified. */
export async function threadOf(trx: Knex.Transaction): Promise<ServerThread | undefined> {
  // A transaction's client hands out its own connection (src/db/mysql/transactor.ts).
  const connection = (await trx.client.acquireConnection()) as object;
  return threads.get(connection);
}

/**
 * Both start times are read to the second, each rounded down on its own
 * clock: one server's two readings can differ by a second. A server that
 * restarted within that second is taken for the same one; see endThread for
 * why that costs nothing but a wasted KILL.
 */
function sameServer(a: ServerIdentity, b: ServerIdentity): boolean {
  return a.host === b.host && a.port === b.port && a.serverId === b.serverId && Math.abs(a.startedAt - b.startedAt) <= 2;
}

/**
 * Ends `lost` from another connection of the same server and waits until the
 * server has let its thread go: then whatever its transaction did is final
 * (committed, or rolled back when the thread ended) and a read on this server
 * sees which. Resolves false when that cannot be shown: `q`'s connection is on
 * another server (a load balancer's other Galera node, which cannot see that
 * thread), or the thread outlives `deadline`.
 *
 * A thread that is still there is killed, not waited for: a statement of its
 * packet may be waiting for a lock, and would run the rest of the packet, its
 * COMMIT included, once it got it. KILL needs no privilege for the user's own
 * threads, and PROCESSLIST shows them. A server that restarted and is taken
 * for the same one (sameServer) took the lost thread with it, and what that
 * thread did is final all the same; the KILL then ends whichever of the
 * user's connections holds the id now, which meets a lost connection.
 */
export async function endThread(q: Knex.Transaction, lost: ServerThread, deadline: number): Promise<boolean> {
  const here = await threadOf(q);
  if (!here || !sameServer(here.server, lost.server) || here.id === lost.id) return false;
  for (let killed = false; ;) {
    const [rows] = (await q.raw('SELECT ID FROM information_schema.PROCESSLIST WHERE ID = ?', [lost.id])) as unknown as [unknown[]];
    if (!rows.length) return true;
    if (!killed) {
      killed = true;
      // A thread that ended between the two statements: 1094, unknown thread.
      await q.raw(`KILL CONNECTION ${lost.id}`).catch((err: { errno?: number }) => {
        if (err?.errno !== 1094) throw err;
      });
      continue;
    }
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
}
