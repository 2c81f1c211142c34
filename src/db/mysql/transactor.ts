import { EventEmitter } from 'node:events';
import makeKnex from 'knex/lib/knex-builder/make-knex';
import type Transaction_MySQL2 from 'knex/lib/dialects/mysql2/transaction';

/**
 * The `trx` a transaction hands its work, built from shared prototypes.
 *
 * knex makes every transaction's `trx` a whole new knex instance
 * (`makeTransactor` → `makeKnex`): a function given a closure for each of its
 * ~150 query-builder methods, its property definitions, an EventEmitter and
 * four listeners on the transaction's client. That is 27 KB per transaction,
 * and the most of what a send leaves for the old generation: measured with
 * V8's sampling heap profiler over 1,000 sends (bench/alloc.ts), 20 of the
 * 39 KB a send allocated that no young-generation collection freed came from
 * it, so every scavenge copied it and every mark-compact swept it.
 *
 * knex's methods are written against `this` (`this.queryBuilder()`,
 * `this.context.client`), so they can live on one prototype taken from a
 * real knex instance, made once per client class. What is per transaction
 * (its client, its user params, commit and rollback, nested transactions)
 * is set on the object as knex's `makeTransactor` sets it. The query, start
 * and response events knex forwards from the transaction's client to `trx`
 * are wired on the first listener (Parley listens on the root instance,
 * which receives them from the client either way).
 */
export interface TransactorTx {
  userParams?: Record<string, unknown>;
  client: { transacting?: boolean };
  commit(conn: unknown, value: unknown): unknown;
  rollback(conn: unknown, error: unknown): unknown;
  release(conn: unknown, value: unknown): unknown;
  rollbackTo(conn: unknown, error: unknown): unknown;
  isCompleted(): boolean;
}

type TxClient = Transaction_MySQL2.TxClient & EventEmitter;

interface Context {
  client: TxClient;
  userParams: Record<string, unknown>;
  /** The transaction this context belongs to (the outer one of a nested transaction). */
  trx: TransactorTx;
  queryBuilder(): { table(name: unknown, options: unknown): unknown };
  _transaction(container: unknown, options: unknown, outerTx: unknown): unknown;
}

/** What is per instance on a knex object: never shared through the prototype. */
const PER_INSTANCE = new Set([
  'length',
  'name',
  'prototype',
  'arguments',
  'caller',
  'context',
  '_events',
  '_eventsCount',
  '_maxListeners',
  '_internalListeners',
]);
const FORWARDED_EVENTS = ['start', 'query', 'query-error', 'query-response'] as const;
const SUBSCRIBE = ['on', 'addListener', 'once', 'prependListener', 'prependOnceListener'] as const;

interface Protos {
  transactor: object;
  context: object;
}
const protosByClass = new WeakMap<object, Protos>();

function protosFor(client: TxClient): Protos {
  const cls = Object.getPrototypeOf(client) as object;
  let protos = protosByClass.get(cls);
  if (protos) return protos;
  // One real instance, to take knex's own definitions from. Its methods are
  // closures over it, so it is made on a bare object of the client's class,
  // not on a live client: the prototypes keep it for the life of the process.
  const sample = makeKnex(Object.create(cls)) as unknown as Record<string, unknown> & { context: Record<string, unknown> };

  const transactor = Object.create(Function.prototype) as Record<string, unknown>;
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(sample))) {
    if (!PER_INSTANCE.has(key)) Object.defineProperty(transactor, key, descriptor);
  }
  for (const method of SUBSCRIBE) {
    const subscribe = EventEmitter.prototype[method];
    transactor[method] = function (
      this: EventEmitter & { context: Context; forwarding?: boolean },
      ...args: [string, (...a: unknown[]) => void]
    ) {
      forwardEvents(this);
      return subscribe.apply(this, args);
    };
  }

  const context = Object.create(null) as Record<string, unknown>;
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(sample.context))) {
    if (key !== 'client' && key !== 'userParams') Object.defineProperty(context, key, descriptor);
  }
  // As knex's makeTransactor: a transaction's user params come from the root instance.
  context.withUserParams = () => {
    throw new Error('Cannot set user params on a transaction - it can only inherit params from main knex instance');
  };
  // A transaction opened on `trx` is nested in this one (a savepoint).
  context.transaction = function (this: Context, container: unknown, options?: { doNotRejectOnRollback?: boolean }) {
    const config = options ? { ...options, doNotRejectOnRollback: options.doNotRejectOnRollback ?? true } : { doNotRejectOnRollback: true };
    return this._transaction(container, config, this.trx);
  };
  protos = { transactor, context };
  protosByClass.set(cls, protos);
  return protos;
}

/** knex's forwarding of its client's events to `trx`, wired when someone first listens on `trx`. */
function forwardEvents(trx: EventEmitter & { context: Context; forwarding?: boolean }): void {
  if (trx.forwarding) return;
  trx.forwarding = true;
  for (const name of FORWARDED_EVENTS) trx.context.client.on(name, (...args: unknown[]) => trx.emit(name, ...args));
}

/** The `trx` of transaction `tx` on `connection`, as knex's makeTransactor builds it. */
export function makeTransactor(tx: TransactorTx, connection: unknown, trxClient: TxClient): unknown {
  const protos = protosFor(trxClient);
  const context = Object.create(protos.context) as Context;
  context.client = trxClient;
  context.userParams = tx.userParams ?? {};
  context.trx = tx;
  const transactor = function (tableName?: unknown, options?: unknown) {
    const qb = context.queryBuilder();
    return tableName ? qb.table(tableName, options) : qb;
  } as unknown as Record<string, unknown>;
  Object.setPrototypeOf(transactor, protos.transactor);
  transactor.context = context;
  EventEmitter.call(transactor as unknown as EventEmitter);
  transactor.isTransaction = true;
  transactor.savepoint = (container: unknown, options: unknown) =>
    (transactor.transaction as (c: unknown, o: unknown) => unknown)(container, options);
  if (tx.client.transacting) {
    transactor.commit = (value: unknown) => tx.release(connection, value);
    transactor.rollback = (error: unknown) => tx.rollbackTo(connection, error);
  } else {
    transactor.commit = (value: unknown) => tx.commit(connection, value);
    transactor.rollback = (error: unknown) => tx.rollback(connection, error);
  }
  transactor.isCompleted = () => tx.isCompleted();
  return transactor;
}

/**
 * The client a transaction's statements go through: the pool's client, but
 * always on the transaction's connection, never released to the pool, and
 * refusing statements once the transaction has ended. knex's own
 * makeTxClient (knex 3.3), which it does not export; unchanged.
 */
export function makeTxClient(
  trx: EventEmitter & { isCompleted(): boolean; txid?: string },
  client: EventEmitter & Record<string, unknown>,
  connection: unknown,
): TxClient {
  const trxClient = Object.create((client.constructor as { prototype: object }).prototype) as TxClient & Record<string, unknown>;
  for (const key of ['version', 'config', 'driver', 'connectionSettings', 'valueForUndefined', 'logger'] as const)
    trxClient[key] = client[key];
  trxClient.transacting = true;
  for (const name of FORWARDED_EVENTS) {
    trxClient.on(name, (...args: unknown[]) => {
      trx.emit(name, ...args);
      client.emit(name, ...args);
    });
  }
  const query = trxClient.query as (conn: unknown, obj: unknown) => unknown;
  trxClient.query = function (conn: unknown, obj: unknown) {
    const completed = trx.isCompleted();
    return new Promise((resolve) => {
      if (conn !== connection) throw new Error('Invalid connection for transaction query.');
      if (completed) throw new Error('Transaction query already complete, run with DEBUG=knex:tx for more info');
      resolve(query.call(trxClient, conn, obj) as ReturnType<TxClient['query']>);
    });
  } as TxClient['query'];
  const stream = trxClient.stream as (conn: unknown, obj: unknown, stream: unknown, options: unknown) => unknown;
  trxClient.stream = function (conn: unknown, obj: unknown, out: unknown, options: unknown) {
    const completed = trx.isCompleted();
    return new Promise((resolve) => {
      if (conn !== connection) throw new Error('Invalid connection for transaction query.');
      if (completed) throw new Error('Transaction query already complete, run with DEBUG=knex:tx for more info');
      resolve(stream.call(trxClient, conn, obj, out, options));
    });
  };
  trxClient.acquireConnection = () => Promise.resolve(connection);
  trxClient.releaseConnection = () => Promise.resolve();
  return trxClient;
}
