import type { Knex } from 'knex';
import type { Invalidation } from '../events/bus';

/**
 * Cache invalidations declared where the rows change.
 *
 * Every query function that writes a row a per-process cache holds (users,
 * realms, group memberships, subscriptions, channels) states what it makes
 * stale with `invalidates(q, ...)`, next to its SQL: an action cannot forget
 * one, whichever path reaches the write. The invalidation is published only
 * once the change is visible to other connections:
 * - inside `inTransaction`, after the commit and before the transaction's
 *   after-commit hooks (its events), so a client that refetches on an event
 *   never reads the old value from a cache;
 * - on a bare connection (a statement of its own), as soon as the statement
 *   has run;
 * - inside a transaction opened some other way, once it commits, to every
 *   listener (that transaction does not say which database it belongs to).
 *
 * Listeners are registered per database handle (src/context.ts hands them
 * to the event bus).
 */
type Sink = (inv: Invalidation) => void;

const sinks = new Map<Knex, Set<Sink>>();
const pending = new WeakMap<Knex.Transaction, Invalidation[]>();

/** Hands every invalidation committed through `db` to `sink`; returns the unsubscription. */
export function onInvalidation(db: Knex, sink: Sink): () => void {
  let set = sinks.get(db);
  if (!set) sinks.set(db, (set = new Set()));
  set.add(sink);
  return () => {
    set.delete(sink);
    if (set.size === 0) sinks.delete(db);
  };
}

/** Called by inTransaction when it opens `trx`: its invalidations wait for the commit. */
export function collectInvalidations(trx: Knex.Transaction): Invalidation[] {
  const list: Invalidation[] = [];
  pending.set(trx, list);
  return list;
}

/** What a write through `q` makes stale (see above for when it is published). */
export function invalidates(q: Knex | Knex.Transaction, ...invs: Invalidation[]): void {
  if (!isTransaction(q)) {
    deliver(sinks.get(q), invs);
    return;
  }
  let list = pending.get(q);
  if (!list) {
    // A transaction opened without inTransaction (a test, a one-off script):
    // publish to everyone once it commits, nothing if it rolls back.
    list = collectInvalidations(q);
    const all = list;
    q.executionPromise.then(
      () => {
        for (const set of sinks.values()) deliver(set, all);
      },
      () => {},
    );
  }
  list.push(...invs);
}

/** Publishes a committed transaction's invalidations, merged (one per kind). */
export function publishInvalidations(db: Knex, invs: readonly Invalidation[]): void {
  if (invs.length) deliver(sinks.get(db), invs);
}

function isTransaction(q: Knex | Knex.Transaction): q is Knex.Transaction {
  return (q as { isTransaction?: boolean }).isTransaction === true;
}

function deliver(set: Set<Sink> | undefined, invs: readonly Invalidation[]): void {
  if (!set || set.size === 0) return;
  for (const inv of merge(invs)) for (const sink of set) sink(inv);
}

/** One invalidation per kind (and organization): a transaction subscribing 500 users publishes two, not 1,000. */
export function merge(invs: readonly Invalidation[]): Invalidation[] {
  if (invs.some((i) => i.kind === 'all')) return [{ kind: 'all' }];
  const users = new Set<number>();
  const channels = new Set<number>();
  const messages = new Set<number>();
  const realms = new Set<number>();
  const received = new Set<number>();
  let receivedByAll = false;
  for (const inv of invs) {
    if (inv.kind === 'received') {
      if (inv.userIds === 'all') receivedByAll = true;
      else for (const id of inv.userIds) received.add(id);
    }
    if (inv.kind === 'user') for (const id of inv.userIds) users.add(id);
    else if (inv.kind === 'channel') for (const id of inv.channelIds) channels.add(id);
    else if (inv.kind === 'messages') for (const id of inv.messageIds) messages.add(id);
    else if (inv.kind === 'realm') realms.add(inv.realmId);
  }
  const out: Invalidation[] = [...realms].map((realmId) => ({ kind: 'realm', realmId }) as const);
  if (users.size) out.push({ kind: 'user', userIds: [...users] });
  if (channels.size) out.push({ kind: 'channel', channelIds: [...channels] });
  if (messages.size) out.push({ kind: 'messages', messageIds: [...messages] });
  if (receivedByAll) out.push({ kind: 'received', userIds: 'all' });
  else if (received.size) out.push({ kind: 'received', userIds: [...received] });
  return out;
}
