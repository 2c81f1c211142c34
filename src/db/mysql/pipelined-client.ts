import type { Knex } from 'knex';
import Client_MySQL2 from 'knex/lib/dialects/mysql2';
import Transaction_MySQL2 from 'knex/lib/dialects/mysql2/transaction';
import { isConnectionLost } from '../../errors';
import { NewRowId } from '../internal/row-id';
import { markIdle } from './idle-check';
import { makeTransactor, makeTxClient } from './transactor';

/**
 * knex's mysql2 client with transactions that spend fewer round trips
 * (ADR 0018, ADR 0026). Nothing outside src/db calls into this file: actions
 * and queries reach it through the transaction API (src/db/transaction.ts,
 * src/db/held-writes.ts; ADR 0034).
 *
 * Each statement knex sends is a round trip: a packet out, a wait, a packet
 * back, and on this machine two context switches. A send to a channel was
 * five of them (BEGIN, the message row, its search terms, its user_messages
 * rows, COMMIT) and the stalls in its latency tail were single round trips
 * that waited a few milliseconds for a CPU. Three changes, all on the
 * transaction's own connection, take it to one:
 *
 * - BEGIN is not sent on its own: it travels in front of the transaction's
 *   first statement, in the same packet. InnoDB takes a transaction's
 *   snapshot at its first read, not at BEGIN, so nothing a statement sees
 *   changes. A transaction that sends no statement at all (a request refused
 *   by its checks) sends no BEGIN, COMMIT or ROLLBACK either.
 * - A write whose result nobody reads (`pipelineWrite`) is held and goes out
 *   in front of the transaction's next statement, or of its COMMIT. Statements
 *   still run in the order they were written, on the same connection, so the
 *   transaction reads its own writes as before.
 * - An INSERT whose generated id later writes need (`pipelineInsert`) is held
 *   too: its id goes into a session variable those writes name, and comes
 *   back to the caller with the packet's answer.
 *
 * Several statements in one packet need mysql2's `multipleStatements`, set on
 * this pool's connections. Values are still escaped by mysql2 whichever flag
 * is set; what the flag changes is how much an SQL injection could do, were
 * one ever written (ADR 0018 weighs it).
 */
export class PipelinedMysqlClient extends Client_MySQL2 {
  constructor(config: Knex.Config) {
    super(config);
    // The dialect's name, where knex keeps the class it was given (dialectOf, the migrations).
    this.config.client = 'mysql2';
  }

  override releaseConnection(connection: unknown): Promise<void> {
    // From now on it is idle: one left idle long is checked before it is used again.
    markIdle(connection as object);
    return super.releaseConnection(connection);
  }

  override transaction(
    container: (trx: Knex.Transaction) => void,
    config?: Knex.TransactionConfig,
    outerTx?: Knex.Transaction | null,
  ): Knex.Transaction {
    // knex's own mysql2 client does the same with its transaction class.
    return new PipelinedTransaction(this, container, config, outerTx) as unknown as Knex.Transaction;
  }
}

type TxClient = Transaction_MySQL2.TxClient & {
  stream?: (conn: unknown, obj: unknown, stream: unknown, options: unknown) => Promise<unknown>;
  acquireConnection(): Promise<unknown>;
};
type QueryParam = Transaction_MySQL2.QueryParam;
type Transactor = {
  parentTransaction?: unknown;
  executionPromise?: Promise<unknown>;
  commit(value: unknown): Promise<unknown>;
  rollback(err: unknown): Promise<unknown>;
};
interface Statement {
  sql: string;
  bindings: readonly unknown[];
  /** Given the statement's own result when its packet is answered (a held insert's id). */
  onResult?: (result: unknown) => void;
}
interface Pipeline {
  /** Whether BEGIN has been sent. */
  begun: boolean;
  /** Writes waiting for the next packet, and their size (characters of SQL and string values). */
  held: Statement[];
  heldSize: number;
  /** A held write that failed where no caller saw it (in a packet of its own): the transaction's next statement throws it. */
  failed: unknown;
  /** By session variable, the held insert that set it last: the only one later statements may name by it. */
  lastInsert: Map<string, NewRowId>;
  /** The transaction client's own query (one packet, one round trip). */
  send: (conn: unknown, obj: QueryParam) => ReturnType<TxClient['query']>;
  /** The same without knex's check that the transaction is still open. */
  sendAfterEnd: (conn: unknown, obj: QueryParam) => ReturnType<TxClient['query']>;
}

/**
 * Past this much held SQL the writes go out in a packet of their own rather
 * than wait: one packet must stay under the server's max_allowed_packet
 * (16 MiB by default on MariaDB), and a rename of thousands of messages holds
 * large search-term inserts.
 */
const MAX_HELD_SIZE = 1 << 20;

const PIPELINE = Symbol('parley.pipeline');
type PipelinedTxClient = TxClient & { [PIPELINE]?: Pipeline };

class PipelinedTransaction extends Transaction_MySQL2 {
  /**
   * knex's own `_onAcquire` (knex 3.3) with one change: the `trx` handed to
   * the work is built from shared prototypes (./transactor.ts), not as a new
   * knex instance per transaction.
   */
  override _onAcquire(container: (trx: unknown) => unknown, connection: unknown): Promise<unknown> {
    const trxClient = makeTxClient(this, this.client, connection);
    this.trxClient = trxClient;
    const init = this.client.transacting ? this.savepoint(connection) : this.begin(connection);
    const executionPromise = new Promise((resolve, reject) => {
      this._resolver = resolve;
      this._rejecter = reject;
    });
    init
      .then(() => {
        const transactor = makeTransactor(this, connection, trxClient) as Transactor;
        this.transactor = transactor;
        if (this.outerTx) transactor.parentTransaction = this.outerTx.transactor;
        transactor.executionPromise = executionPromise;
        // As knex: a thenable from the work commits or rolls back with it; a throw rolls back.
        let result: unknown;
        try {
          result = container(transactor);
        } catch (err) {
          result = Promise.reject(err);
        }
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          (result as Promise<unknown>).then((value) => transactor.commit(value)).catch((err: unknown) => transactor.rollback(err));
        }
        return null;
      })
      .catch((err: unknown) => this._rejecter(err));
    return executionPromise;
  }

  override begin(conn: unknown): Promise<unknown> {
    // SET TRANSACTION must come before BEGIN: left to knex.
    if (this.isolationLevel || this.readOnly) return super.begin(conn);
    pipeline(this.trxClient as PipelinedTxClient);
    return Promise.resolve();
  }

  override async savepoint(conn: unknown): Promise<unknown> {
    // A nested transaction's statements go through a client of their own,
    // not through the outer one's pipeline: what the outer one holds (BEGIN
    // included) goes out first. Should a held write fail there, the outer
    // transaction fails too, even if the nested one's error is caught.
    const p = (this.outerTx?.trxClient as PipelinedTxClient | undefined)?.[PIPELINE];
    if (p) await sendPending(p, conn);
    return super.savepoint(conn);
  }
}

function pipeline(trxClient: PipelinedTxClient): void {
  const unchecked = (Object.getPrototypeOf(trxClient) as TxClient).query;
  const p: Pipeline = {
    begun: false,
    held: [],
    heldSize: 0,
    failed: undefined,
    lastInsert: new Map(),
    send: trxClient.query.bind(trxClient),
    sendAfterEnd: unchecked.bind(trxClient),
  };
  trxClient[PIPELINE] = p;
  trxClient.query = async (conn, obj) => {
    const sql = typeof obj === 'string' ? obj : obj.sql;
    const ending = /^\s*(COMMIT|ROLLBACK)\b/i.exec(sql)?.[1]?.toUpperCase();
    if (ending === 'ROLLBACK') {
      p.held = [];
      p.heldSize = 0;
      if (!p.begun) return undefined;
      return p.send(conn, obj);
    }
    if (p.failed !== undefined) {
      // Never commit past a write that failed: roll back, and fail as it did.
      if (ending === 'COMMIT') await p.sendAfterEnd(conn, 'ROLLBACK').catch(() => undefined);
      throw p.failed;
    }
    if (ending === 'COMMIT' && !p.begun && !p.held.length) return undefined;
    // An empty statement is knex's to refuse ("The query is empty"), on its own.
    if (!sql) {
      await sendPending(p, conn);
      return p.send(conn, obj);
    }
    const prefix = takePending(p);
    if (!prefix.length) return p.send(conn, obj);
    const own = typeof obj === 'string' ? { sql: obj } : obj;
    const merged = { ...own, ...packet([...prefix, { sql: own.sql, bindings: own.bindings ?? [] }]) };
    try {
      const res = await p.send(conn, merged);
      // mysql2 answers a packet of several statements with a result (and a
      // field list) per statement: the caller gets its own statement's (all
      // of them, for a statement that has several: CALL).
      if (res?.response) {
        const [rows, fields] = res.response as [unknown[], unknown[] | undefined];
        const n = prefix.length;
        deliverResults(prefix, rows);
        res.response = rows.length === n + 1 ? [rows[n], fields?.[n]] : [rows.slice(n), fields?.slice(n)];
      }
      return res;
    } catch (err) {
      // A held write that failed stopped the packet before COMMIT: the server
      // still holds the transaction open. Roll it back here, or the pool would
      // hand the connection on with half a transaction in it. (A lost
      // connection took its transaction with it, or committed it: the caller's
      // witness decides, src/db/transaction.ts.) knex has marked the
      // transaction finished by now, hence the unchecked send.
      if (ending === 'COMMIT' && !isConnectionLost(err)) await p.sendAfterEnd(conn, 'ROLLBACK').catch(() => undefined);
      throw err;
    }
  };
  // A stream (none in Parley today) reads after what the transaction holds, as any statement does.
  const stream = trxClient.stream?.bind(trxClient);
  if (stream) {
    trxClient.stream = async (conn, obj, out, options) => {
      if (p.failed !== undefined) throw p.failed;
      await sendPending(p, conn);
      return stream(conn, obj, out, options);
    };
  }
}

/** Sends BEGIN (if not yet sent) and the held writes as a packet of their own; a failure is kept for the transaction's next statement. */
async function sendPending(p: Pipeline, conn: unknown): Promise<void> {
  if (p.failed !== undefined) throw p.failed;
  if (p.begun && !p.held.length) return;
  const statements = takePending(p);
  let res: Awaited<ReturnType<Pipeline['send']>>;
  try {
    res = await p.send(conn, packet(statements));
  } catch (err) {
    p.failed = err;
    throw err;
  }
  const rows = (res?.response as [unknown] | undefined)?.[0];
  // One statement alone is answered with its own result, not a list of one.
  if (rows !== undefined) deliverResults(statements, statements.length === 1 ? [rows] : (rows as unknown[]));
}

/** Hands each statement of an answered packet that asked for its result that result (same order). */
function deliverResults(statements: readonly Statement[], results: readonly unknown[]): void {
  for (let i = 0; i < statements.length; i++) statements[i]!.onResult?.(results[i]);
}

/** Statements as the text and bindings of one packet. */
const packet = (statements: readonly Statement[]) => ({
  sql: statements.map((s) => s.sql).join(';\n'),
  bindings: statements.flatMap((s) => s.bindings),
});

/** BEGIN if not yet sent, then the held writes; the pipeline is empty after. */
function takePending(p: Pipeline): Statement[] {
  const pending = p.begun ? p.held : [{ sql: 'BEGIN', bindings: [] }, ...p.held];
  p.begun = true;
  p.held = [];
  p.heldSize = 0;
  return pending;
}

/**
 * A held statement goes to mysql2 as it is, beside others in one packet: a
 * binding too many would shift values into the next statement. Plain `?`
 * placeholders (all a held write uses) are counted here, without the arrays
 * and strings knex's compiler makes for a 300-value insert (a sixth of what a
 * send allocated, measured); anything else (`??`, an escaped `\?`) goes
 * through knex's compiler.
 */
function checkedStatement(q: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[]): Statement {
  let placeholders = 0;
  for (let i = 0; i < sql.length; i++) {
    if (sql.charCodeAt(i) !== QUESTION_MARK) continue;
    if (sql.charCodeAt(i + 1) === QUESTION_MARK || sql.charCodeAt(i - 1) === BACKSLASH) {
      const compiled = q
        .raw(sql, bindings as Knex.RawBinding[])
        .toSQL()
        .toNative();
      return { sql: compiled.sql, bindings: compiled.bindings };
    }
    placeholders++;
  }
  if (placeholders !== bindings.length) throw new Error(`A held write has ${placeholders} placeholders and ${bindings.length} bindings`);
  if (bindings.includes(undefined)) throw new Error(`Undefined binding in a held write: ${sql.slice(0, 100)}`);
  return { sql, bindings };
}
const QUESTION_MARK = 63;
const BACKSLASH = 92;

const sizeOf = (s: Statement) => s.bindings.reduce<number>((n, b) => n + (typeof b === 'string' ? b.length : 8), s.sql.length);

/** The pipeline of `q` when it is a transaction that holds writes. */
const pipelineOf = (q: Knex | Knex.Transaction): Pipeline | undefined => (q.client as PipelinedTxClient)[PIPELINE];

/** Whether `q` is a transaction that holds writes (MySQL/MariaDB, not nested). */
export function holdsWrites(q: Knex | Knex.Transaction): boolean {
  return pipelineOf(q) !== undefined;
}

/**
 * The tables whose held inserts later writes may name, and the session
 * variable each one's insert sets. The variable is the engine's: callers
 * hold an insert by table (`pipelineInsert`) and name its id through
 * `holdWrite` (src/db/held-writes.ts), which asks `heldIdVariable` whether
 * the variable still holds it.
 */
const HELD_ID_VARIABLES = { messages: '@parley_message_id' } as const;
export type HeldIdTable = keyof typeof HELD_ID_VARIABLES;

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * Holds an INSERT of one row into `table` (whose key is AUTO_INCREMENT), in
 * a transaction that holds writes (see `holdsWrites`), followed by
 * `SET <variable> = LAST_INSERT_ID()`. Later held writes name the new id by
 * the variable, so a transaction that reads nothing after it sends it all
 * with its COMMIT: one round trip (ADR 0026). The statement is written out
 * rather than compiled by knex for each send; its columns are the row's keys,
 * named by code, never by a request (checked to be plain identifiers).
 */
export function pipelineInsert(q: Knex | Knex.Transaction, table: HeldIdTable, row: Readonly<Record<string, unknown>>): NewRowId {
  const p = pipelineOf(q);
  if (!p) throw new Error('pipelineInsert outside a transaction that holds writes');
  const columns = Object.keys(row);
  if (!columns.every((c) => IDENTIFIER.test(c))) throw new Error(`Not a column name in a held insert into ${table}`);
  const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
  if ((q as Knex.Transaction).isCompleted()) throw new Error(`A write held for a transaction that has ended: ${sql.slice(0, 100)}`);
  const variable = HELD_ID_VARIABLES[table];
  const id = NewRowId.held(p, variable);
  const insert = checkedStatement(
    q,
    sql,
    columns.map((c) => row[c]),
  );
  // Never throws: it runs while COMMIT's answer is read, where a throw would be taken for a failed COMMIT.
  insert.onResult = (result) => {
    const value = Number((result as { insertId?: unknown } | undefined)?.insertId);
    if (Number.isSafeInteger(value) && value > 0) NewRowId.settle(id, value);
  };
  // No size check here: the row is one, and the held writes after it check.
  p.held.push(insert, { sql: `SET ${variable} = LAST_INSERT_ID()`, bindings: [] });
  p.heldSize += sizeOf(insert);
  p.lastInsert.set(variable, id);
  return id;
}

/**
 * The session variable a statement of `q`'s transaction may name `id` by:
 * only while the id is not known, its insert is held by this transaction,
 * and no later held insert has set the variable again. Otherwise undefined:
 * the id must be given as a value.
 */
export function heldIdVariable(q: Knex | Knex.Transaction, id: NewRowId): string | undefined {
  const p = pipelineOf(q);
  if (!p) return undefined;
  const variable = NewRowId.variableIn(id, p);
  return variable !== undefined && p.lastInsert.get(variable) === id ? variable : undefined;
}

/** Sends what `q`'s transaction holds now, a round trip (its held inserts' ids come back); nothing outside such a transaction. */
export async function sendHeld(q: Knex | Knex.Transaction): Promise<void> {
  const p = pipelineOf(q);
  if (p) await sendPending(p, await q.client.acquireConnection());
}

/**
 * Runs a write whose result the caller does not need. Inside a pipelined
 * MySQL transaction it is held and sent in the same packet as the
 * transaction's next statement or its COMMIT; anywhere else (SQLite, a bare
 * connection) it runs now. An error it raises surfaces at that next
 * statement, so use it only for writes whose failure fails the transaction
 * (nothing may catch it and carry on). The statement is checked before it
 * is held: as many bindings as placeholders, none undefined.
 */
export async function pipelineWrite(q: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[]): Promise<void> {
  const p = pipelineOf(q);
  if (!p) {
    await q.raw(sql, bindings as Knex.RawBinding[]);
    return;
  }
  if ((q as Knex.Transaction).isCompleted()) throw new Error(`A write held for a transaction that has ended: ${sql.slice(0, 100)}`);
  const statement = checkedStatement(q, sql, bindings);
  if (p.heldSize + sizeOf(statement) > MAX_HELD_SIZE) await sendPending(p, await q.client.acquireConnection());
  p.held.push(statement);
  p.heldSize += sizeOf(statement);
}
