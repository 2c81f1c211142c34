import type { Knex } from 'knex';
import { dialectOf } from '../src/db/connection';

/**
 * The row types of generated/tables.d.ts, read from a migrated database's own
 * catalogue (SQLite's PRAGMA table_xinfo, MariaDB's information_schema), so
 * they describe what the migrations really built, dialect branches and raw
 * SQL included (docs/adr/0037-typed-tables.md). scripts/gen-tables.js runs it
 * on a scratch SQLite database; test/table-types.test.ts runs it on both
 * databases and expects the file checked in.
 *
 * Types are what the drivers return: a boolean column is 0 or 1 on both
 * (SQLite has no boolean, MariaDB's is TINYINT(1)); integers of any width are
 * numbers (mysql2 runs with supportBigNumbers and without bigNumberStrings:
 * ids and times stay below 2^53); times are integer seconds, never DATETIME.
 */

type Kind = 'bool' | 'number' | 'string';

export interface ColumnInfo {
  name: string;
  kind: Kind;
  nullable: boolean;
  /** An insert may leave it out: nullable, a default, or an auto-increment id. */
  optional: boolean;
  /** Computed by the database (a generated column): read, never written. */
  generated: boolean;
}

export interface TableInfo {
  name: string;
  columns: ColumnInfo[];
}

/** knex's own bookkeeping and SQLite's catalogue are not the application's tables. */
const OWN_TABLES = /^(knex_|sqlite_)/;

function rows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

function sqliteKind(table: string, column: string, declared: string): Kind {
  const t = declared.toLowerCase();
  if (t === 'boolean') return 'bool';
  if (t.includes('int')) return 'number';
  if (t.includes('char') || t.includes('text') || t.includes('clob')) return 'string';
  throw new Error(`${table}.${column}: no TypeScript type for SQLite's ${declared}`);
}

function mysqlKind(table: string, column: string, dataType: string, columnType: string): Kind {
  if (columnType.toLowerCase().startsWith('tinyint(1)')) return 'bool';
  if (/int$/i.test(dataType)) return 'number';
  if (/(char|text)$/i.test(dataType)) return 'string';
  throw new Error(`${table}.${column}: no TypeScript type for MariaDB's ${columnType}`);
}

async function readSqlite(db: Knex): Promise<TableInfo[]> {
  const all = rows<{ name: string; sql: string }>(await db.raw(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`));
  const tables: TableInfo[] = [];
  for (const { name, sql } of all.filter((t) => !OWN_TABLES.test(t.name))) {
    const info = rows<{ name: string; type: string; notnull: number; dflt_value: unknown; pk: number; hidden: number }>(
      await db.raw(`PRAGMA table_xinfo("${name}")`),
    );
    // knex's increments() is `integer … primary key autoincrement`: numbered when an insert leaves it
    // out, as MariaDB's AUTO_INCREMENT. (Any lone INTEGER PRIMARY KEY would be, but on MariaDB only these are.)
    const autoIncrement = (column: string) => new RegExp(`(?:^|[\\s,(])[\`"]?${column}[\`"]?\\s+integer[^,]*autoincrement`, 'i').test(sql);
    tables.push({
      name,
      columns: info
        .filter((c) => c.hidden !== 1)
        .map((c) => {
          // SQLite lets a primary key column without NOT NULL hold NULL; MariaDB does not, and no code writes one.
          const nullable = c.notnull === 0 && c.pk === 0;
          return {
            name: c.name,
            kind: sqliteKind(name, c.name, c.type),
            nullable,
            optional: nullable || c.dflt_value !== null || autoIncrement(c.name),
            generated: c.hidden === 2 || c.hidden === 3,
          };
        }),
    });
  }
  return tables;
}

async function readMysql(db: Knex): Promise<TableInfo[]> {
  const info = rows<{ t: string; c: string; data_type: string; column_type: string; is_nullable: string; dflt: unknown; extra: string }>(
    await db.raw(
      `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, DATA_TYPE AS data_type, COLUMN_TYPE AS column_type,
              IS_NULLABLE AS is_nullable, COLUMN_DEFAULT AS dflt, EXTRA AS extra
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    ),
  );
  const tables = new Map<string, TableInfo>();
  for (const c of info) {
    if (OWN_TABLES.test(c.t)) continue;
    let table = tables.get(c.t);
    if (!table) tables.set(c.t, (table = { name: c.t, columns: [] }));
    const nullable = c.is_nullable === 'YES';
    table.columns.push({
      name: c.c,
      kind: mysqlKind(c.t, c.c, c.data_type, c.column_type),
      nullable,
      // MariaDB reports a nullable column's absent default as the text 'NULL'; a NOT NULL one's as NULL.
      optional: nullable || c.dflt !== null || /auto_increment/i.test(c.extra),
      generated: /generated|virtual|stored|persistent/i.test(c.extra),
    });
  }
  return [...tables.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * Columns one dialect has and the other not, left out of the types: portable
 * code cannot read them. user_messages.id: on MariaDB the table is keyed by
 * (user_id, message_id) without an id since migration 024 (ADR 0017); SQLite
 * keeps its rowid id.
 */
const SQLITE_ONLY: Readonly<Record<string, readonly string[]>> = { user_messages: ['id'] };

/** The application's tables and their columns on both databases, as the migrations left them on `db`. */
export async function readTables(db: Knex): Promise<TableInfo[]> {
  if (dialectOf(db) === 'mysql') return readMysql(db);
  const tables = await readSqlite(db);
  for (const [table, columns] of Object.entries(SQLITE_ONLY)) {
    const t = tables.find((x) => x.name === table);
    for (const column of columns) {
      // A stale entry would hide nothing: say so rather than keep it.
      if (!t?.columns.some((c) => c.name === column)) throw new Error(`${table}.${column} is listed as SQLite-only but SQLite lacks it`);
    }
    t!.columns = t!.columns.filter((c) => !columns.includes(c.name));
  }
  return tables;
}

const SELECTED: Record<Kind, string> = { bool: 'DbBool', number: 'number', string: 'string' };
const WRITTEN: Record<Kind, string> = { bool: 'DbBoolIn', number: 'number', string: 'string' };

/**
 * Two overloads knex's typings lack for typed tables (interface merging puts
 * them before knex's own). `where({…})` with a fresh object literal matches
 * only the table's row type, so `where({ is_active: true })` (a boolean for a
 * column read as 0/1) and a value read from an untyped row would not compile:
 * the object's keys are checked against the columns, its values are bound
 * as given, as in `where('column', value)`. And `min('id as id')`,
 * `count('* as n')`: knex takes the string for an alias map and types the row as a string.
 */
const KNEX_OVERLOADS = [
  "declare module 'knex' {",
  '  namespace Knex {',
  '    interface Where<TRecord extends {} = any, TResult = unknown> {',
  '      (object: { readonly [K in keyof ResolveTableType<TRecord>]?: unknown }): QueryBuilder<TRecord, TResult>;',
  '    }',
  '    interface TypePreservingAggregation<TRecord extends {} = any, TResult = unknown[], TValue = any> {',
  '      <TKey extends keyof ResolveTableType<TRecord> & string, TAlias extends string>(',
  '        columnName: `${TKey} as ${TAlias}`,',
  '      ): QueryBuilder<TRecord, Array<{ [K in TAlias]: ResolveTableType<TRecord>[TKey] | null }>>;',
  '    }',
  '    interface AsymmetricAggregation<TRecord extends {} = any, TResult = unknown[], TValue = any> {',
  '      <TAlias extends string>(columnName: `${string} as ${TAlias}`): QueryBuilder<TRecord, Array<{ [K in TAlias]: TValue }>>;',
  '    }',
  '  }',
  '}',
  '',
];

/** The text of generated/tables.d.ts for these tables. Columns in name order: the two databases order added columns differently. */
export function renderTables(tables: TableInfo[]): string {
  const out: string[] = [
    '// Generated by scripts/gen-tables.js from the migrations (src/db/migrations) applied to a scratch',
    '// database: do not edit. `npm run gen` rewrites it; test/table-types.test.ts checks both databases agree.',
    "import type { Knex } from 'knex';",
    '',
    '/** A boolean column as both drivers return it (SQLite INTEGER, MariaDB TINYINT(1)). */',
    'export type DbBool = 0 | 1;',
    '/** A boolean column as written: knex binds true and false as 1 and 0. */',
    'export type DbBoolIn = boolean | DbBool;',
  ];
  const columnsOf = (t: TableInfo) => [...t.columns].sort((a, b) => (a.name < b.name ? -1 : 1));
  out.push('', "/** A row of each table as selected (`TableRow<'users'>`). */", 'export interface TableRows {');
  for (const t of tables) {
    out.push(`  ${t.name}: {`);
    for (const c of columnsOf(t)) out.push(`    ${c.name}: ${SELECTED[c.kind]}${c.nullable ? ' | null' : ''};`);
    out.push('  };');
  }
  out.push('}', '', '/** A row of each table as inserted: what has a default may be left out; generated columns cannot be written. */');
  out.push('export interface TableInserts {');
  for (const t of tables) {
    out.push(`  ${t.name}: {`);
    for (const c of columnsOf(t).filter((c) => !c.generated))
      out.push(`    ${c.name}${c.optional ? '?' : ''}: ${WRITTEN[c.kind]}${c.nullable ? ' | null' : ''};`);
    out.push('  };');
  }
  out.push('}', '');
  out.push('export type TableName = keyof TableRows;');
  out.push('export type TableRow<T extends TableName> = TableRows[T];');
  out.push('export type TableInsert<T extends TableName> = TableInserts[T];');
  out.push('', "/** What knex takes as a written value: the column's type or raw SQL. */");
  out.push('type Written<T> = { [K in keyof T]: T[K] | Knex.Raw };');
  out.push('', "declare module 'knex/types/tables' {", '  interface Tables {');
  for (const t of tables)
    out.push(
      `    ${t.name}: Knex.CompositeTableType<TableRows['${t.name}'], Written<TableInserts['${t.name}']>, Partial<Written<TableInserts['${t.name}']>>>;`,
    );
  out.push('  }', '}', '', ...KNEX_OVERLOADS);
  return out.join('\n');
}
