import Database from '@rocicorp/zero-sqlite3';
import ClientBetterSQLite3 from 'knex/lib/dialects/better-sqlite3';
import Runner from 'knex/lib/execution/runner';
import { preparedStatement } from './statement-cache';

/**
 * knex's better-sqlite3 client with one writer and read-only readers (ADR 0015),
 * on @rocicorp/zero-sqlite3: better-sqlite3's code and API, whose npm package
 * carries its compiled add-on, so installing it compiles nothing (ADR 0033).
 *
 * knex gives SQLite a pool of one connection, and a transaction keeps it
 * across every await of its action: a burst of sends queued every read behind
 * it. Here the pool still holds exactly one connection, the writer: every
 * transaction and every statement that may write goes through it, serialised
 * as before. A second writer would not help: the driver is synchronous, so
 * a writer waiting on SQLite's lock (busy_timeout) would block the event loop
 * and with it the transaction it waits for.
 *
 * A statement outside a transaction that SQLite itself calls read-only runs on
 * a read-only connection instead, at once: in WAL mode readers do not wait for
 * the writer, and each statement sees every transaction committed before it
 * started (a commit has returned before the next statement is even issued).
 * Reads inside a transaction stay on it, where they see its own writes.
 */
export class RoutedSqliteClient extends ClientBetterSQLite3 {
  private readonly readerCount: number;
  private readers: Database.Database[] = [];
  private nextReader = 0;
  private writerOpened = false;

  constructor(config: ConstructorParameters<typeof ClientBetterSQLite3>[0] & { readers: number }) {
    super(config);
    // The dialect's name, where knex keeps the class it was given: libraries
    // (rate-limiter-flexible's SQLite store) and the migrations tell dialects
    // apart by it.
    this.config.client = 'better-sqlite3';
    const file = this.connectionSettings.filename;
    // An in-memory database exists only inside its one connection: no readers.
    this.readerCount = file === ':memory:' || file === '' ? 0 : config.readers;
  }

  /** knex's dialect loads `better-sqlite3` by that name; the same API under another. */
  override _driver(): typeof Database {
    return Database;
  }

  override async acquireRawConnection(): Promise<Database.Database> {
    const conn = await super.acquireRawConnection();
    conn.pragma('journal_mode = WAL');
    conn.pragma('synchronous = NORMAL');
    conn.pragma('foreign_keys = ON');
    conn.pragma('busy_timeout = 5000');
    // The writer checkpoints after a commit once the WAL holds 1,000 pages
    // (SQLite's default, said here because readers rely on it): readers hold a
    // snapshot only while one statement runs, synchronously, so no reader is
    // ever inside one when the writer checkpoints and each checkpoint completes.
    conn.pragma('wal_autocheckpoint = 1000');
    // A large transaction (a topic deleted, a backup pinning a snapshot) grows
    // the WAL; once it is checkpointed and restarted, the file is cut back to this.
    conn.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    this.writerOpened = true;
    return conn;
  }

  override runner(builder: Runner.Builder): Runner {
    return new RoutedRunner(this, builder);
  }

  /** Statements are prepared once per connection (statement-cache.ts), not on every query. */
  override async _query(connection: Database.Database, obj: ClientBetterSQLite3.QueryObject): Promise<ClientBetterSQLite3.QueryObject> {
    if (!obj.sql) throw new Error('The query is empty');
    const statement = preparedStatement(connection, obj.sql);
    const safeIntegers = this._optSafeIntegers(obj.options);
    if (safeIntegers !== undefined) statement.safeIntegers(safeIntegers);
    const bindings = this._formatBindings(obj.bindings);
    if (statement.reader) {
      obj.response = statement.all(bindings);
      return obj;
    }
    const response = statement.run(bindings);
    obj.response = response;
    obj.context = { lastID: response.lastInsertRowid, changes: response.changes };
    return obj;
  }

  /**
   * The reader for a statement issued outside a transaction, or null when it
   * belongs on the writer: anything but a SELECT (or WITH … SELECT) that
   * SQLite, preparing it, reports as read-only and returning rows.
   */
  readerFor(sql: string): Database.Database | null {
    if (this.readerCount === 0 || !this.writerOpened || !READ_START.test(sql)) return null;
    if (this.readers.length === 0) this.openReaders();
    const reader = this.readers[this.nextReader]!;
    this.nextReader = (this.nextReader + 1) % this.readers.length;
    let statement: Database.Statement;
    try {
      statement = preparedStatement(reader, sql);
    } catch {
      // A table the reader has not seen yet, a syntax error: the writer reports it.
      return null;
    }
    return statement.readonly && statement.reader ? reader : null;
  }

  /** The read-only connections opened so far (tests look at their statement caches). */
  readerConnections(): readonly Database.Database[] {
    return this.readers;
  }

  override async destroy(callback?: (err?: unknown) => void): Promise<void> {
    for (const reader of this.readers.splice(0)) reader.close();
    return super.destroy(callback);
  }

  private openReaders(): void {
    const file = this.connectionSettings.filename;
    for (let i = 0; i < this.readerCount; i++) {
      // The writer has opened the file and switched it to WAL before any reader
      // exists (writerOpened), so a read-only connection finds both.
      const reader = new Database(file, { readonly: true, fileMustExist: true });
      reader.pragma('busy_timeout = 5000');
      this.readers.push(reader);
    }
  }
}

/** The WAL file's size once a checkpoint has restarted it (bytes). */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

const READ_START = /^\s*(select|with)\b/i;
const READ_METHODS = new Set([undefined, 'select', 'first', 'pluck']);

/**
 * Runs a read outside a transaction on a reader; everything else as knex does
 * (on the connection the pool or the transaction gives). The decision is made
 * before a connection is acquired, since acquiring the writer is the wait
 * this avoids.
 */
class RoutedRunner extends Runner {
  override async run(): Promise<unknown> {
    const client = this.client as RoutedSqliteClient;
    const builder = this.builder;
    // A transaction's queries (its client says `transacting`) and a query given
    // a connection of its own keep theirs. Schema builders and query builders
    // that insert, update or delete never read alone.
    if (client.transacting || builder._connection || !mayRead(builder)) return super.run();
    const compiled = builder.toSQL();
    if (Array.isArray(compiled)) return super.run();
    const reader = client.readerFor(compiled.sql);
    if (!reader) return super.run();
    // What knex's own run does once it holds a connection (ensureConnectionCallback),
    // with the SQL already compiled; a reader is never released to the pool.
    this.connection = reader;
    try {
      client.emit('start', builder);
      builder.emit('start', builder);
      const result = await this.query(compiled);
      builder.emit('end');
      return result;
    } catch (err) {
      if (builder._events?.error) builder.emit('error', err);
      throw err;
    }
  }
}

function mayRead(builder: Runner.Builder): boolean {
  if (Array.isArray(builder._statements)) return READ_METHODS.has(builder._method);
  return typeof builder.sql === 'string';
}
