/**
 * The parts of knex's (untyped) mysql2 dialect and transaction that the
 * pipelining client extends. knex 3.3.0, pinned; checked by test/knex-internals.test.ts
 * (their shape) and test/pipelined-transaction.test.ts (their behaviour).
 */
declare module 'knex/lib/dialects/mysql2' {
  import type { Knex } from 'knex';

  class Client_MySQL2 extends Knex.Client {}
  export = Client_MySQL2;
}

declare module 'knex/lib/dialects/mysql2/transaction' {
  import type { EventEmitter } from 'node:events';
  namespace Transaction_MySQL2 {
    /** What knex hands a client's `query`: a statement's text, or its compiled form. */
    type QueryParam = string | { sql: string; bindings?: readonly unknown[]; response?: unknown[]; [k: string]: unknown };
    /** The client a transaction's statements go through (knex's makeTxClient). */
    interface TxClient {
      query(conn: unknown, obj: QueryParam): Promise<{ response?: unknown[] } | undefined>;
    }
  }

  class Transaction_MySQL2 extends EventEmitter {
    constructor(client: unknown, container: unknown, config: unknown, outerTx: unknown);
    /** The pool's client, or for a nested transaction the outer one's transaction client. */
    client: EventEmitter & Record<string, unknown> & { transacting?: boolean };
    trxClient: Transaction_MySQL2.TxClient;
    outerTx?: Transaction_MySQL2 | null;
    /** The `trx` handed to the transaction's work. */
    transactor?: unknown;
    userParams?: Record<string, unknown>;
    _resolver: (value?: unknown) => void;
    _rejecter: (err: unknown) => void;
    _onAcquire(container: (trx: unknown) => unknown, connection: unknown): Promise<unknown>;
    isCompleted(): boolean;
    commit(conn: unknown, value: unknown): unknown;
    rollback(conn: unknown, error: unknown): unknown;
    release(conn: unknown, value: unknown): unknown;
    rollbackTo(conn: unknown, error: unknown): unknown;
    isolationLevel?: string;
    readOnly?: boolean;
    begin(conn: unknown): Promise<unknown>;
    savepoint(conn: unknown): Promise<unknown>;
  }
  export = Transaction_MySQL2;
}

declare module 'knex/lib/knex-builder/make-knex' {
  /** A knex instance on `client` (what `knex(config)` returns, and knex's transactions before src/db/mysql/transactor.ts). */
  function makeKnex(client: unknown): unknown;
  export = makeKnex;
}
