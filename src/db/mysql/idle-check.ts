/**
 * A pooled connection that sat idle is checked, within a bound, before the
 * pool hands it out (ADR 0026, "Dead connections"). A peer that went away
 * without closing the socket (a hung proxy, a host gone from the network)
 * leaves a connection that looks open; a statement sent on it would wait for
 * an answer that never comes, and the request with it. A connection busy a
 * moment ago is not checked: under load the pool hands out connections used
 * milliseconds before, and those pay nothing.
 */

/** Idle longer than this, a connection is pinged before use. */
export const IDLE_CHECK_MS = 2000;
/** A ping slower than this fails the connection: a server that answers at all answers a ping in well under a millisecond. */
export const PING_TIMEOUT_MS = 1000;

const IDLE_SINCE = Symbol('parley.idleSince');

interface PooledConnection {
  [IDLE_SINCE]?: number;
  __knex__disposed?: unknown;
  _fatalError?: unknown;
  _closing?: boolean;
  ping(cb: (err: unknown) => void): unknown;
  destroy(): void;
  stream?: { destroyed?: boolean; destroy(): void };
}

/** Called as the pool takes a connection back. */
export function markIdle(connection: object): void {
  (connection as PooledConnection)[IDLE_SINCE] = performance.now();
}

/**
 * The pool's validation for one pool: true to hand the connection out, false
 * to have the pool close it and take another (or open one). Once a ping has
 * failed, connections that were already idle when it was sent are closed
 * without a ping of their own: they most likely went the same way, and a new
 * connection costs less than another second's wait for each.
 */
export function idleCheck(): (connection: object) => Promise<boolean> {
  let failedPingSentAt = -Infinity;
  return async (connection) => {
    const c = connection as PooledConnection;
    const idleSince = c[IDLE_SINCE];
    // New, or used a moment ago.
    if (idleSince === undefined || performance.now() - idleSince < IDLE_CHECK_MS) return true;
    // Already known closed (knex's own check, after this one, would say so): no ping, and no suspicion of the others.
    if (c._fatalError || c._closing || c.stream?.destroyed) return false;
    if (idleSince <= failedPingSentAt) return close(c);
    const sentAt = performance.now();
    if (await pingWithin(c, PING_TIMEOUT_MS)) return true;
    failedPingSentAt = Math.max(failedPingSentAt, sentAt);
    return close(c);
  };
}

function pingWithin(c: PooledConnection, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    c.ping((err) => {
      clearTimeout(timer);
      resolve(!err);
    });
  });
}

/** Closes at once, the socket too: a peer that does not answer would not acknowledge a polite close either. */
function close(c: PooledConnection): false {
  c.__knex__disposed ??= new Error('A pooled connection did not answer a ping');
  c.destroy();
  c.stream?.destroy();
  return false;
}
