/**
 * The parts of knex's (untyped) mysql2 dialect and transaction that the
 * pipelining client extends. knex 3.3; checked by test/pipelined-transaction.test.ts.
 */
declare module 'knex/lib/dialects/mysql2' {
  import type { Knex } from 'knex';

  class Client_MySQL2 extends Knex.Client {}
  export = Client_MySQL2;
}

declare module 'knex/lib/dialects/mysql2/transaction' {
  namespace Transaction_MySQL2 {
    /** What knex hands a client's `query`: a statement's text, or its compiled form. */
    type QueryParam = string | { sql: string; bindings?: readonly unknown[]; response?: unknown[]; [k: string]: unknown };
    /** The client a transaction's statements go through (knex's makeTxClient). */
    interface TxClient {
      query(conn: unknown, obj: QueryParam): Promise<{ response?: unknown[] } | undefined>;
    }
  }

  class Transaction_MySQL2 {
    constructor(client: unknown, container: unknown, config: unknown, outerTx: unknown);
    trxClient: Transaction_MySQL2.TxClient;
    outerTx?: Transaction_MySQL2 | null;
    isolationLevel?: string;
    readOnly?: boolean;
    begin(conn: unknown): Promise<unknown>;
    savepoint(conn: unknown): Promise<unknown>;
  }
  export = Transaction_MySQL2;
}
