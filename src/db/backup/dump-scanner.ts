/**
 * Reads mariadb-dump's output as it streams past and records, from the dump
 * itself, what the manifest needs: each table's row count and the applied
 * migrations. Counting here rather than with separate SELECTs matters: the
 * dump is one consistent snapshot (--single-transaction), and a count taken on
 * another connection would describe another moment.
 *
 * The dump's layout is regular: statements start at a line start, a table's
 * rows are `INSERT INTO `name` VALUES (…),(…);` (one line or one row per
 * line, depending on the version), and string values escape quotes and
 * backslashes with a backslash (hex for binary with --hex-blob). So counting
 * the top-level parenthesised tuples of each INSERT, outside string
 * literals, counts rows. Byte-wise: UTF-8 continuation bytes never equal the
 * ASCII delimiters looked at.
 */
const NEWLINE = 0x0a;
const QUOTE = 0x27;
const BACKSLASH = 0x5c;
const OPEN = 0x28;
const CLOSE = 0x29;
const SEMICOLON = 0x3b;

/** Longest statement opening looked at; longer lines are not INSERT or CREATE TABLE openings. */
const MAX_HEADER = 512;

const INSERT_RE = /^INSERT INTO `((?:[^`]|``)+)` VALUES\s*$/;
const CREATE_RE = /^CREATE TABLE `((?:[^`]|``)+)`/;
const COMPLETED = '-- Dump completed';
/** knex_migrations rows: (id,'name',batch,'time'). */
const MIGRATION_ROW_RE = /\(\d+,'((?:[^'\\]|\\.)*)'/g;

type Mode = 'header' | 'skip' | 'values';

export interface DumpSummary {
  /** Rows per table, for every table the dump creates. */
  tables: Record<string, number>;
  /** Names in knex_migrations, in dump order. */
  migrations: string[];
  /** mariadb-dump wrote its closing "-- Dump completed" line. */
  completed: boolean;
}

export class DumpScanner {
  private readonly tables = new Map<string, number>();
  private mode: Mode = 'header';
  private header: number[] = [];
  private table = '';
  private inString = false;
  private escaped = false;
  private depth = 0;
  private migrationText: Buffer[] | null = null;
  private completed = false;

  /** The table being dumped (for progress). */
  get currentTable(): string {
    return this.table;
  }

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.mode === 'values') i = this.scanValues(chunk, i);
      else if (this.mode === 'skip') {
        const nl = chunk.indexOf(NEWLINE, i);
        if (nl < 0) return;
        this.mode = 'header';
        i = nl + 1;
      } else i = this.scanHeader(chunk, i);
    }
  }

  finish(): DumpSummary {
    if (this.mode === 'header' && this.header.length) this.endHeaderLine();
    const migrations: string[] = [];
    if (this.migrationText) {
      const text = Buffer.concat(this.migrationText).toString('utf8');
      for (const m of text.matchAll(MIGRATION_ROW_RE)) migrations.push(m[1]!.replace(/\\(.)/g, '$1'));
    }
    return { tables: Object.fromEntries(this.tables), migrations, completed: this.completed };
  }

  /** Collects a line's opening until it is known to be an INSERT (values follow) or not. */
  private scanHeader(chunk: Buffer, start: number): number {
    for (let i = start; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (b === NEWLINE) {
        this.endHeaderLine();
        return i + 1;
      }
      if (b === OPEN && this.startInsert()) return i; // the tuple is scanned in values mode
      this.header.push(b);
      if (this.header.length > MAX_HEADER) {
        this.header = [];
        this.mode = 'skip';
        return i + 1;
      }
    }
    return chunk.length;
  }

  /** A whole line was collected: an INSERT whose rows start on the next line, a CREATE TABLE, or the end mark. */
  private endHeaderLine(): void {
    if (this.startInsert()) return;
    const line = Buffer.from(this.header).toString('utf8');
    this.header = [];
    const create = CREATE_RE.exec(line);
    if (create) {
      this.table = unquote(create[1]!);
      this.tables.set(this.table, 0);
    } else if (line.startsWith(COMPLETED)) {
      this.completed = true;
    }
  }

  private startInsert(): boolean {
    const m = INSERT_RE.exec(Buffer.from(this.header).toString('utf8'));
    if (!m) return false;
    this.header = [];
    this.table = unquote(m[1]!);
    if (!this.tables.has(this.table)) this.tables.set(this.table, 0);
    this.mode = 'values';
    this.inString = false;
    this.escaped = false;
    this.depth = 0;
    if (this.table === 'knex_migrations') this.migrationText ??= [];
    return true;
  }

  /** Counts top-level tuples until the statement's closing semicolon. */
  private scanValues(chunk: Buffer, start: number): number {
    let rows = 0;
    let i = start;
    let ended = false;
    for (; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) this.inString = false;
        continue;
      }
      if (b === QUOTE) this.inString = true;
      else if (b === OPEN) {
        if (this.depth === 0) rows++;
        this.depth++;
      } else if (b === CLOSE) this.depth--;
      else if (b === SEMICOLON && this.depth === 0) {
        ended = true;
        i++;
        break;
      }
    }
    this.tables.set(this.table, this.tables.get(this.table)! + rows);
    if (this.table === 'knex_migrations') this.migrationText!.push(Buffer.from(chunk.subarray(start, i)));
    if (ended) this.mode = 'skip';
    return i;
  }
}

function unquote(name: string): string {
  return name.replace(/``/g, '`');
}
