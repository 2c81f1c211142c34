import type { Knex } from 'knex';
import type { Invalidation, InvalidationListener } from '../ports/invalidation';

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
 * - inside a transaction opened some other way, once it commits.
 *
 * No registry holds any of it (ADR 0034). The handles carry their own:
 * - a database handle carries its sinks (`onInvalidation`; src/cache/index.ts
 *   hands them to the event bus), on its knex client's configuration, the
 *   one object knex gives unchanged to every transaction's client
 *   (makeTxClient, test/knex-internals.test.ts): a transaction reaches its
 *   own database's sinks and no other's;
 * - a transaction carries the invalidations its writes declared until it
 *   commits (`collectInvalidations`, called by inTransaction as it opens it).
 */
const SINKS = Symbol('parley.invalidationSinks');
const PENDING = Symbol('parley.pendingInvalidations');

type CarriesSinks = { [SINKS]?: Set<InvalidationListener> };
type CarriesPending = { [PENDING]?: Invalidation[] };

/** The sinks of the database `q` belongs to (a transaction's are its database's). */
function sinksOf(q: Knex | Knex.Transaction): Set<InvalidationListener> {
  const config = (q.client as { config: CarriesSinks }).config;
  return (config[SINKS] ??= new Set());
}

/** Hands every invalidation committed through `db` to `sink`; returns the unsubscription. */
export function onInvalidation(db: Knex, sink: InvalidationListener): () => void {
  const sinks = sinksOf(db);
  sinks.add(sink);
  return () => sinks.delete(sink);
}

/** Called by inTransaction when it opens `trx`: from now on `trx` carries the invalidations its writes declare, until the commit. */
export function collectInvalidations(trx: Knex.Transaction): Invalidation[] {
  const list: Invalidation[] = [];
  (trx as Knex.Transaction & CarriesPending)[PENDING] = list;
  return list;
}

/** What a write through `q` makes stale (see above for when it is published). */
export function invalidates(q: Knex | Knex.Transaction, ...invs: Invalidation[]): void {
  if (!isTransaction(q)) {
    deliver(sinksOf(q), invs);
    return;
  }
  let list = (q as Knex.Transaction & CarriesPending)[PENDING];
  if (!list) {
    // A transaction opened without inTransaction (a test, a one-off script):
    // publish to its database's sinks once it commits, nothing if it rolls back.
    list = collectInvalidations(q);
    const all = list;
    const sinks = sinksOf(q);
    q.executionPromise.then(
      () => deliver(sinks, all),
      () => {},
    );
  }
  list.push(...invs);
}

/** Publishes a committed transaction's invalidations, merged (one per kind). */
export function publishInvalidations(db: Knex, invs: readonly Invalidation[]): void {
  if (invs.length) deliver(sinksOf(db), invs);
}

function isTransaction(q: Knex | Knex.Transaction): q is Knex.Transaction {
  return (q as { isTransaction?: boolean }).isTransaction === true;
}

function deliver(sinks: ReadonlySet<InvalidationListener>, invs: readonly Invalidation[]): void {
  if (sinks.size === 0) return;
  for (const inv of merge(invs)) for (const sink of sinks) sink(inv);
}

/** One invalidation per kind (and organization): a transaction subscribing 500 users publishes two, not 1,000. */
export function merge(invs: readonly Invalidation[]): Invalidation[] {
  if (invs.some((i) => i.kind === 'all')) return [{ kind: 'all' }];
  const users = new Set<number>();
  const channels = new Set<number>();
  const messages = new Set<number>();
  const realms = new Set<number>();
  const received = new Set<number>();
  const linkifierRealms = new Set<number>();
  const topicLists = new Set<number>();
  let receivedByAll = false;
  // Organization domains and playgrounds: one per kind and organization.
  const realmLists = new Map<string, Invalidation>();
  for (const inv of invs) {
    if (inv.kind === 'realm_domains' || inv.kind === 'playgrounds') realmLists.set(`${inv.kind}:${inv.realmId}`, inv);
    if (inv.kind === 'received') {
      if (inv.userIds === 'all') receivedByAll = true;
      else for (const id of inv.userIds) received.add(id);
    }
    if (inv.kind === 'user') for (const id of inv.userIds) users.add(id);
    else if (inv.kind === 'channel') for (const id of inv.channelIds) channels.add(id);
    else if (inv.kind === 'messages') for (const id of inv.messageIds) messages.add(id);
    else if (inv.kind === 'realm') realms.add(inv.realmId);
    else if (inv.kind === 'linkifiers') linkifierRealms.add(inv.realmId);
    else if (inv.kind === 'topics') for (const id of inv.recipientIds) topicLists.add(id);
  }
  const out: Invalidation[] = [...realms].map((realmId) => ({ kind: 'realm', realmId }) as const);
  for (const realmId of linkifierRealms) out.push({ kind: 'linkifiers', realmId });
  if (users.size) out.push({ kind: 'user', userIds: [...users] });
  if (channels.size) out.push({ kind: 'channel', channelIds: [...channels] });
  if (messages.size) out.push({ kind: 'messages', messageIds: [...messages] });
  if (topicLists.size) out.push({ kind: 'topics', recipientIds: [...topicLists] });
  if (receivedByAll) out.push({ kind: 'received', userIds: 'all' });
  else if (received.size) out.push({ kind: 'received', userIds: [...received] });
  out.push(...realmLists.values());
  return out;
}
