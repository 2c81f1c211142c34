/**
 * A new row's id as the statements of its transaction use it (ADR 0026,
 * ADR 0034). Where the row is inserted at once (SQLite, a bare connection)
 * the id is known from the start. On MySQL/MariaDB a held insert's id is
 * known once the packet that carries the insert is answered (for a send,
 * the packet that commits), or once a commit witness found the row; until
 * then the transaction's later held writes name it by the session variable
 * the insert set (src/db/mysql/pipelined-client.ts).
 *
 * Outside src/db the class is a type only (src/db/transaction.ts exports it
 * with `export type`): code there reads an id (`known`, `committed`), asks the
 * transaction for it (`tx.idOf`), or hands it to a write built through
 * `holdWrite` (src/db/held-writes.ts). It never sees the variable's name,
 * so no statement can name it but the ones the engine lets: held writes of
 * the same transaction, while that insert is still the last one to have set
 * the variable.
 */
export class NewRowId {
  #value: number | undefined;
  /** While held: what holds the insert (the transaction's pipeline) and the session variable it sets. */
  readonly #heldBy: object | null;
  readonly #variable: string | null;

  private constructor(value: number | undefined, heldBy: object | null, variable: string | null) {
    this.#value = value;
    this.#heldBy = heldBy;
    this.#variable = variable;
  }

  /** The id, if known yet (see above). */
  known(): number | undefined {
    return this.#value;
  }

  /** The id of a row whose transaction has committed: its COMMIT's answer or its witness gave it. */
  committed(): number {
    if (this.#value === undefined) throw new Error('The id of a held insert is not known before its packet is answered');
    return this.#value;
  }

  /** An id known from the start. */
  static known(value: number): NewRowId {
    return new NewRowId(value, null, null);
  }

  /** The id of an insert `heldBy` holds, named by `variable` in the statements after it. */
  static held(heldBy: object, variable: string): NewRowId {
    return new NewRowId(undefined, heldBy, variable);
  }

  /** Gives a held insert its id (its packet's answer, or a witness that read the row back); a known id stays. */
  static settle(id: NewRowId, value: number): void {
    id.#value ??= value;
  }

  /** The session variable naming `id` in what `heldBy` holds: only while the id is unknown and `heldBy` is what holds its insert. */
  static variableIn(id: NewRowId, heldBy: object): string | undefined {
    return id.#value === undefined && id.#heldBy === heldBy ? (id.#variable ?? undefined) : undefined;
  }
}
