import type { Knex } from 'knex';
import { CommitOutcomeUnknownError, DatabaseUnavailableError, isConnectionLost } from '../errors';
import { resolveNewId, type NewId } from './held-writes';
import { NewRowId } from './internal/row-id';
import { collectInvalidations, publishInvalidations } from './invalidations';
import { endThread, threadOf, type ServerThread } from './mysql/server-thread';

export type { NewId, NewRowId };

/**
 * The transaction API: the one port through which actions and queries reach
 * the database engine (ADR 0034). Neither names src/db/mysql or src/db/sqlite
 * (dependency-cruiser refuses it): what differs by engine (held writes, ids
 * known only at COMMIT, the proof of a lost COMMIT) is behind `Tx`, the
 * statement helpers of ./held-writes.ts and the invalidations of
 * ./invalidations.ts.
 *
 * A transaction carries what happens once it commits: actions queue events
 * (and any other side effect that must not happen for a rolled-back change)
 * with `afterCommit`, and the invalidations its writes declare travel with
 * it (./invalidations.ts); both run only once it has committed.
 */
export interface Tx {
  trx: Knex.Transaction;
  afterCommit(fn: () => void): void;
  /**
   * Gives a way to tell, from another connection, whether this transaction
   * committed: a read of something only it writes. It is consulted only when
   * the connection is lost during COMMIT (see inTransaction). The first one
   * given decides: a transaction commits whole, so one witness speaks for all.
   */
  witness(check: CommitWitness): void;
  /**
   * Runs only when the connection was lost during COMMIT and the witness
   * found the transaction committed, before the after-commit hooks: it
   * recovers what COMMIT's lost answer carried (a held insert's id, ADR 0026),
   * on whatever connection the pool gives next.
   */
  afterLostCommit(recover: (db: Knex) => Promise<void>): void;
  /**
   * A new row's id as a value, now: on MySQL/MariaDB a held insert's id costs
   * a round trip (what the transaction holds is sent) unless its packet was
   * answered already. For writes that need the number (a foreign key in a
   * statement that is not a held write, a read that excludes the row).
   */
  idOf(id: NewId): Promise<number>;
  /**
   * Names the row behind `id` as this transaction's witness, and recovers its
   * id when COMMIT's answer was lost: `find` reads, on whatever connection is
   * given, the id of the row as it was written (with `known`, the id if it
   * is known, to look it up by), or null if it is not stored. The first
   * witness of a transaction decides (see `witness`); every row so named
   * recovers its own id (`afterLostCommit`), so each send's event can go out.
   */
  witnessInsert(id: NewRowId, find: (db: Knex, known: number | undefined) => Promise<number | null>): void;
}

/** Resolves true when the transaction's writes are visible (it committed), false when they are not. */
export type CommitWitness = (db: Knex) => Promise<boolean>;

/**
 * Errors after which the whole transaction may simply run again, because the
 * database guarantees it did not apply:
 * - 1213: an InnoDB deadlock (it kills one of the transactions in a lock
 *   cycle), and on Galera a certification conflict with a transaction
 *   committed on another node, reported at any statement or at COMMIT;
 * - 1062, a duplicate key: actions check before they insert, and two
 *   concurrent transactions can both pass the check (InnoDB's consistent
 *   reads do not lock). Run again, the work sees the committed row and takes
 *   its "already exists" path (the existing DM conversation, "Reaction
 *   already exists.", CHANNEL_ALREADY_EXISTS, ...);
 * - SQLITE_BUSY.
 */
const MAX_ATTEMPTS = 4;
type DbError = { code?: string; errno?: number } | undefined;
const isConflict = (e: DbError) => e?.errno === 1213 || e?.errno === 1062 || e?.code === 'SQLITE_BUSY';

/**
 * 1047: a Galera node that lost its cluster's quorum refuses every statement
 * ("WSREP has not yet prepared node for application use") until it rejoins,
 * or until the load balancer sends the next attempt to another node.
 */
const isNodeNotReady = (e: DbError) => e?.errno === 1047;

/**
 * How long a transaction keeps retrying while the database is unreachable or
 * not ready: long enough to ride out a Galera node's death (commits stall
 * for about 4 s while the cluster evicts it) or a proxy's failover, short
 * enough that the client's request does not hang.
 */
const UNAVAILABLE_BUDGET_MS = 8000;

export async function inTransaction<T>(db: Knex, work: (tx: Tx) => Promise<T>): Promise<T> {
  const started = Date.now();
  // Whether the work already ran again after a COMMIT proven lost before it committed (below).
  let rerunAfterLostCommit = false;
  for (let attempt = 1; ; attempt++) {
    const pending: Array<() => void> = [];
    let invalidations: ReturnType<typeof collectInvalidations> = [];
    const witnesses: CommitWitness[] = [];
    const recoveries: Array<(db: Knex) => Promise<void>> = [];
    // The work's value, set before COMMIT: it is returned too when COMMIT's
    // answer was lost and the witness finds the transaction committed.
    let result!: T;
    // Set once the work has resolved: knex sends COMMIT next (on MySQL with the
    // writes it still holds, src/db/mysql/pipelined-client.ts), so an error from
    // then on comes from COMMIT's packet (or from releasing the connection after it).
    let committing = false;
    // The transaction, to find its connection's server thread should COMMIT be lost.
    let transaction: Knex.Transaction | undefined;
    try {
      await db.transaction(async (trx) => {
        transaction = trx;
        invalidations = collectInvalidations(trx);
        result = await work({
          trx,
          afterCommit: (fn) => pending.push(fn),
          witness: (check) => witnesses.push(check),
          afterLostCommit: (recover) => recoveries.push(recover),
          idOf: (id) => resolveNewId(trx, id),
          witnessInsert: (id, find) => {
            const recover = async (fresh: Knex) => {
              const found = await find(fresh, id.known());
              if (found !== null) NewRowId.settle(id, found);
              return found !== null;
            };
            witnesses.push(recover);
            // The id was lost with COMMIT's answer: the row found gives it. The
            // witness or an earlier round trip may have given it already.
            recoveries.push(async (fresh) => {
              if (id.known() === undefined) await recover(fresh);
            });
          },
        });
        committing = true;
      });
    } catch (err) {
      const e = err as DbError;
      if (isConflict(e)) {
        // Rolled back by the database (a conflict at COMMIT too: Galera certifies before it applies).
        if (attempt >= MAX_ATTEMPTS) throw err;
        // Back off a little, with jitter, so the competing transactions do not collide again.
        await sleep(attempt * 5 + Math.random() * 10);
        continue;
      }
      const lost = isConnectionLost(err);
      if (!lost && !isNodeNotReady(e)) throw err;
      // A connection lost before COMMIT took its transaction with it: safe to run again.
      // Lost during COMMIT, the outcome is unknown: never replayed without proof.
      if (lost && committing) {
        // A witness can settle it. It did commit: the request succeeded, and
        // its events and invalidations go out as after any commit (without
        // this, a message that was saved reached no one's event queue).
        // The witness and the recoveries share one budget: a lost COMMIT answers within it.
        const deadline = Date.now() + UNAVAILABLE_BUDGET_MS;
        const [witness] = witnesses;
        const outcome = witness ? await settleLostCommit(db, transaction, witness, deadline) : 'unknown';
        if (outcome === 'not committed') {
          // Proven: nothing was written and nothing can be any more (its thread
          // is gone). Most often the connection had died in the pool before the
          // packet was sent: run the work again, on another connection. Once: a
          // second such loss answers the plain "try again" 503.
          if (rerunAfterLostCommit) throw new DatabaseUnavailableError();
          rerunAfterLostCommit = true;
          continue;
        }
        if (outcome === 'unknown') {
          // If it did commit, whatever it changed may sit stale in the caches
          // (its own invalidations are not published on a guess): drop them all.
          // The client is told to check (POST /messages: its own recent messages).
          publishInvalidations(db, [{ kind: 'all' }]);
          throw new CommitOutcomeUnknownError();
        }
        // What a recovery cannot read stays unknown; the caller copes (a send's event is skipped).
        // The witness may have found the commit only near the deadline (a Galera cluster
        // evicting a node, above): the recoveries get a moment of their own past it.
        const recoverBy = Math.max(deadline, Date.now() + RECOVERY_BUDGET_MS);
        for (const recover of recoveries) await askAnotherConnection(db, recoverBy, recover, undefined);
      } else {
        if (Date.now() - started >= UNAVAILABLE_BUDGET_MS) throw new DatabaseUnavailableError();
        await sleep(unavailableBackoffMs(attempt));
        continue;
      }
    }
    // Committed: the hooks run outside the retry, since whatever they throw,
    // running the work again would store it a second time (a sent message twice).
    // Cache invalidations first (src/db/invalidations.ts): no event announces a
    // change while a cache still holds the value before it.
    publishInvalidations(db, invalidations);
    for (const fn of pending) fn();
    return result;
  }
}

/**
 * What became of a transaction whose connection was lost during COMMIT.
 * 'committed' when the witness finds its writes. 'not committed' only with
 * proof that nothing can commit later either: a witness that finds nothing
 * proves nothing by itself, since on a server that only lost the network the
 * transaction's thread may still be running its packet (waiting for a lock,
 * say) and commit after the read. So the thread is ended first, from another
 * connection of the same server (src/db/mysql/server-thread.ts), and the
 * witness asked on that connection once it is gone. Where that cannot be
 * done (another server answered, the connection was never identified, the
 * thread outlived the budget): 'unknown'.
 *
 * A witness that finds nothing without that proof is asked again until the
 * deadline. A Galera node killed during COMMIT may have sent its write set
 * already: the other nodes apply it only once they have evicted the dead
 * node (4–5 s, measured), and a read before that finds nothing. Answered
 * "unknown" at once, the client looked for its message too early, missed
 * it, and sent it a second time (the fault test saw it). Asked until the
 * deadline (8 s), the witness meets the cluster after the eviction and the
 * send succeeds; only a transaction still not found then is "unknown".
 */
export async function settleLostCommit(
  db: Knex,
  transaction: Knex.Transaction | undefined,
  witness: CommitWitness,
  deadline: number,
): Promise<'committed' | 'not committed' | 'unknown'> {
  const thread = transaction ? await threadOf(transaction) : undefined;
  for (;;) {
    const outcome = await settleOnce(db, thread, witness, deadline);
    if (outcome !== 'unknown' || Date.now() + WITNESS_AGAIN_MS >= deadline) return outcome;
    await sleep(WITNESS_AGAIN_MS);
  }
}

/** How long, at least, a committed transaction's recoveries may retry after its witness answered. */
const RECOVERY_BUDGET_MS = 2000;

/** How long a witness that found nothing waits before it looks again. */
const WITNESS_AGAIN_MS = 250;

/** One look: the thread ended where it can be, then the witness read. */
function settleOnce(
  db: Knex,
  thread: ServerThread | undefined,
  witness: CommitWitness,
  deadline: number,
): Promise<'committed' | 'not committed' | 'unknown'> {
  return askAnotherConnection(
    db,
    deadline,
    async (fresh) => {
      if (!thread) return (await witness(fresh)) ? 'committed' : 'unknown';
      // One connection for the proof and the read, each statement reading the
      // latest commits (READ COMMITTED): the witness must look after the thread is gone.
      return fresh.transaction(
        async (other) => {
          const ended = await endThread(other, thread, deadline);
          if (await witness(other)) return 'committed' as const;
          return ended ? ('not committed' as const) : ('unknown' as const);
        },
        { isolationLevel: 'read committed' },
      );
    },
    'unknown',
  );
}

/**
 * Runs a read after a lost COMMIT (a witness, a recovery) on whatever
 * connection the pool gives next (the proxy may be moving the writer:
 * connection errors are retried until `deadline`, which the witness and the
 * recoveries of one transaction share). `otherwise` when it cannot: a
 * witness that could not look saw nothing.
 */
async function askAnotherConnection<T>(db: Knex, deadline: number, read: (db: Knex) => Promise<T>, otherwise: T): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read(db);
    } catch (err) {
      if (!isConnectionLost(err) && !isNodeNotReady(err as DbError)) return otherwise;
      if (Date.now() >= deadline) return otherwise;
      await sleep(unavailableBackoffMs(attempt));
    }
  }
}

/** While the database is away: 50 ms doubling up to 1 s, with jitter so that waiting requests do not return together. */
const unavailableBackoffMs = (attempt: number) => Math.min(1000, 50 * 2 ** Math.min(attempt, 5)) * (0.5 + Math.random() / 2);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
