import type { Knex } from 'knex';
import { NewRowId } from './internal/row-id';
import { heldIdVariable, holdsWrites, pipelineInsert, pipelineWrite, sendHeld, type HeldIdTable } from './mysql/pipelined-client';
import type { TableInsert } from '../../generated/tables';

/**
 * Writes whose result nobody reads, and the new rows' ids they name: the
 * part of the transaction API that query files use (ADR 0034). What is
 * behind it differs by engine, never its meaning:
 * - in a MySQL/MariaDB transaction a held write waits and goes out in the
 *   packet of the transaction's next statement or of its COMMIT, and an
 *   insert whose id later writes need is held too, its id in a session
 *   variable (src/db/mysql/pipelined-client.ts, ADR 0018, ADR 0026);
 * - on SQLite and on a bare connection each runs at once.
 * Either way statements run in the order they were written, so the
 * transaction reads its own writes.
 */
type Q = Knex | Knex.Transaction;

export type { NewRowId };
export type { HeldIdTable };

/** A row's id as a write names it: a number, or a new row's (known or still held). */
export type NewId = number | NewRowId;

/**
 * How the statement `holdWrite` builds names ids. The engine decides, per
 * id and per statement: a placeholder and its value, or, for the last held
 * insert of this transaction whose answer has not come, the session
 * variable it set. A builder cannot name that variable any other way.
 */
export interface IdsInSql {
  /** The id in SQL text: `?` (its value is in `bindings(id)`), or the session variable. */
  sql(id: NewId): string;
  /** What `sql(id)` binds: the id, or nothing. */
  bindings(id: NewId): number[];
  /** The id as SQL text that binds nothing: an integer literal, or the session variable. */
  literal(id: NewId): string;
}

export interface HeldStatement {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * Runs a write whose result the caller does not need, built by `build` from
 * the ids it names. Held in a MySQL transaction (see above); elsewhere run
 * now. An error it raises may surface at the transaction's next statement
 * or at COMMIT, so use it only for writes whose failure fails the
 * transaction (nothing may catch it and carry on). The statement is checked
 * before it is held: as many bindings as `?`, none undefined.
 *
 * An id the variable no longer names (another held insert came after it)
 * and whose answer has not come makes the transaction send what it holds
 * first, a round trip, and the statement is built again with the value.
 */
export async function holdWrite(q: Q, build: (ids: IdsInSql) => HeldStatement): Promise<void> {
  let statement = buildStatement(q, build);
  if (statement === null) {
    await sendHeld(q);
    statement = buildStatement(q, build);
    if (statement === null) throw new Error('A held write names a new row whose id this transaction does not hold');
  }
  await pipelineWrite(q, statement.sql, statement.bindings);
}

/** The statement, or null when it names an id that is neither known nor held under its variable. */
function buildStatement(q: Q, build: (ids: IdsInSql) => HeldStatement): HeldStatement | null {
  const ids = new IdForms(q);
  const statement = build(ids);
  return ids.unresolved ? null : statement;
}

/** IdsInSql for one statement of `q` (one object, no closures: a send builds three). */
class IdForms implements IdsInSql {
  /** Set when an id was asked for that is neither known nor named by its variable. */
  unresolved = false;
  constructor(private readonly q: Q) {}

  sql(id: NewId): string {
    const v = this.form(id);
    return typeof v === 'string' ? v : '?';
  }

  bindings(id: NewId): number[] {
    const v = this.form(id);
    return typeof v === 'string' ? [] : [v];
  }

  literal(id: NewId): string {
    const v = this.form(id);
    return typeof v === 'string' ? v : integerLiteral(v);
  }

  /** The id's value, or the session variable that holds it. */
  private form(id: NewId): number | string {
    if (typeof id === 'number') return id;
    const value = id.known();
    if (value !== undefined) return value;
    const variable = heldIdVariable(this.q, id);
    if (variable !== undefined) return variable;
    this.unresolved = true;
    return 0;
  }
}

/** An integer as SQL text; anything else (a string, NaN, a fraction) is refused, never written. */
export function integerLiteral(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`Not an integer: ${String(value).slice(0, 40)}`);
  return String(value);
}

/**
 * Inserts one row into `table` (one whose key later writes of the
 * transaction name, see HeldIdTable) and gives its id. In a MySQL
 * transaction the insert is held: the id is known once the packet that
 * carries it is answered, and `holdWrite` names it by a session variable
 * until then (ADR 0026). Elsewhere the row is written now.
 */
export async function insertNewRow(q: Q, table: HeldIdTable, row: Readonly<TableInsert<HeldIdTable>>): Promise<NewRowId> {
  if (holdsWrites(q)) return pipelineInsert(q, table, row);
  // better-sqlite3 and mysql2 both return [id] for one row.
  const [first] = (await q(table).insert(row)) as unknown[];
  return NewRowId.known(typeof first === 'object' && first !== null ? Number((first as { id: number }).id) : Number(first));
}

/** An id's value now: sends what the transaction holds when it is a held insert's not answered yet (a round trip). */
export async function resolveNewId(q: Q, id: NewId): Promise<number> {
  if (typeof id === 'number') return id;
  if (id.known() === undefined) await sendHeld(q);
  const value = id.known();
  if (value === undefined) throw new Error('A held insert was sent without its id coming back');
  return value;
}
