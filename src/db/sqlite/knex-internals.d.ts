/**
 * The parts of knex's (untyped) better-sqlite3 dialect and query runner that
 * the routing client extends. knex 3.3.0, pinned; checked by test/knex-internals.test.ts
 * (their shape) and test/sqlite-readers.test.ts (their behaviour).
 */
declare module 'knex/lib/dialects/better-sqlite3' {
  import type { Knex } from 'knex';
  import type Database from '@rocicorp/zero-sqlite3';

  namespace ClientBetterSQLite3 {
    /** What knex's runner hands to `_query` and gets back. */
    interface QueryObject {
      sql: string;
      bindings?: readonly unknown[];
      options?: unknown;
      response?: unknown;
      context?: { lastID: number | bigint; changes: number };
    }
  }

  class ClientBetterSQLite3 extends Knex.Client {
    connectionSettings: { filename: string };
    /** Set on the client a transaction's queries run through (knex's makeTxClient). */
    transacting?: boolean;
    /** The driver module knex opens connections with (by default the package better-sqlite3). */
    _driver(): unknown;
    _query(connection: Database.Database, obj: ClientBetterSQLite3.QueryObject): Promise<ClientBetterSQLite3.QueryObject>;
    _optSafeIntegers(options: unknown): boolean | undefined;
    _formatBindings(bindings: readonly unknown[] | undefined): unknown[];
  }
  export = ClientBetterSQLite3;
}

declare module 'knex/lib/execution/runner' {
  namespace Runner {
    /** A builder as the runner sees it: a query builder, a raw statement or a schema builder. */
    interface Builder {
      toSQL(): { sql: string; bindings?: readonly unknown[] } | unknown[];
      emit(event: string, ...args: unknown[]): boolean;
      _events?: { error?: unknown };
      _connection?: unknown;
      /** Query builders: the statements, and insert/update/delete/... (undefined: a select). */
      _statements?: unknown[];
      _method?: string;
      /** Raw statements: their text. */
      sql?: unknown;
    }
  }

  class Runner {
    constructor(client: unknown, builder: Runner.Builder);
    client: unknown;
    builder: Runner.Builder;
    connection: unknown;
    run(): Promise<unknown>;
    query(obj: unknown): Promise<unknown>;
  }
  export = Runner;
}
