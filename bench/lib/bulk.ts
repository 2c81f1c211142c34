import Database from '@rocicorp/zero-sqlite3';
import mysql from 'mysql2';
import type { Connection } from 'mysql2/promise';
import { createConnection } from 'mysql2/promise';
import { mysqlConnectionOptions } from '../../src/db/connection';

export type Value = number | string | null;

/** Rows for one table, with explicit ids (batch-insert ids differ between SQLite and MySQL, so none are read back). */
export interface TableRows {
  table: string;
  columns: string[];
  rows: Value[][];
}

/** Writes one batch of rows per call, in one transaction. */
export interface BulkSink {
  write(batch: TableRows[]): Promise<void>;
  /** Restores anything set aside for the load (deferred indexes), then closes. */
  close(): Promise<void>;
}

/**
 * MariaDB: one round trip per batch — START TRANSACTION, multi-row INSERTs
 * of a few thousand rows, COMMIT — sent as one multi-statement query, so
 * the generator builds the next batch while the server stores this one.
 * The session skips FK and unique checks (as mysqldump's output does): ids
 * and (user, message) pairs are unique by construction.
 */
export async function mysqlSink(databaseUrl: string): Promise<BulkSink> {
  const conn: Connection = await createConnection({ ...mysqlConnectionOptions(databaseUrl), multipleStatements: true });
  await conn.query('SET SESSION foreign_key_checks = 0, unique_checks = 0');
  const deferred = await deferIndexes(conn, ['user_messages']);
  const rowsPerStatement = (t: TableRows) => (t.table === 'messages' ? 500 : 5000);
  return {
    async write(batch) {
      const parts: string[] = ['START TRANSACTION'];
      for (const t of batch) {
        const head = `INSERT INTO \`${t.table}\` (${t.columns.map((c) => `\`${c}\``).join(',')}) VALUES `;
        const step = rowsPerStatement(t);
        for (let i = 0; i < t.rows.length; i += step) {
          const values: string[] = [];
          for (const row of t.rows.slice(i, i + step)) values.push(`(${row.map(sqlValue).join(',')})`);
          parts.push(head + values.join(','));
        }
      }
      parts.push('COMMIT');
      await conn.query(parts.join(';\n'));
    },
    async close() {
      try {
        await deferred.restore();
      } finally {
        await conn.end();
      }
    },
  };
}

/**
 * Measured on MariaDB 10.11 (400k user_messages rows): 24k rows/s with the
 * four indexes on virtual generated columns (is_unread, is_starred, …; since
 * migration 026 none is left), 70k
 * without. So those indexes are dropped for the load and re-added
 * afterwards (a sorted build), from their own definitions as SHOW CREATE
 * TABLE prints them; restore() then checks that each table's definition is
 * what it was (up to the order of its lines). Indexes a foreign key needs
 * are never touched.
 */
async function deferIndexes(conn: Connection, tables: string[]): Promise<{ restore(): Promise<void> }> {
  const saved: Array<{ table: string; before: string; keys: string[] }> = [];
  for (const table of tables) {
    const before = await showCreate(conn, table);
    const virtual = new Set([...before.matchAll(/^\s*`(\w+)`[^\n]*\bGENERATED ALWAYS AS\b[^\n]*\bVIRTUAL\b/gm)].map((m) => m[1]!));
    const keys = before
      .split('\n')
      .map((l) => l.trim().replace(/,$/, ''))
      .filter((l) => /^KEY /.test(l) && [...virtual].some((c) => l.includes(`\`${c}\``)));
    if (!keys.length) continue;
    const names = keys.map((k) => /KEY `(\w+)`/.exec(k)![1]!);
    await conn.query(`ALTER TABLE \`${table}\` ${names.map((n) => `DROP INDEX \`${n}\``).join(', ')}`);
    saved.push({ table, before, keys });
  }
  return {
    async restore() {
      for (const { table, before, keys } of saved) {
        const t0 = Date.now();
        process.stderr.write(`re-adding ${keys.length} deferred index(es) on ${table}… `);
        await conn.query(`ALTER TABLE \`${table}\` ${keys.map((k) => `ADD ${k}`).join(', ')}`);
        process.stderr.write(`${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
        const after = await showCreate(conn, table);
        if (sortedLines(after) !== sortedLines(before))
          throw new Error(`${table}: the definition after re-adding indexes differs:\n${before}\n---\n${after}`);
      }
    },
  };
}

/** A definition's lines, trailing commas dropped and sorted: index order may differ after re-adding. */
const sortedLines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim().replace(/,$/, ''))
    .sort()
    .join('\n');

async function showCreate(conn: Connection, table: string): Promise<string> {
  const [rows] = await conn.query(`SHOW CREATE TABLE \`${table}\``);
  const text = (rows as Array<Record<string, string>>)[0]!['Create Table']!;
  return text.replace(/ AUTO_INCREMENT=\d+/, '');
}

const sqlValue = (v: Value): string => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : mysql.escape(v));

/** SQLite: prepared statements in one transaction per batch (the driver is synchronous). */
export function sqliteSink(filename: string): BulkSink {
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = OFF');
  db.pragma('cache_size = -262144'); // 256 MB page cache for this loading connection only
  const statements = new Map<string, Database.Statement>();
  const statement = (t: TableRows) => {
    const key = `${t.table}(${t.columns.join(',')})`;
    let s = statements.get(key);
    if (!s) {
      s = db.prepare(
        `INSERT INTO "${t.table}" (${t.columns.map((c) => `"${c}"`).join(',')}) VALUES (${t.columns.map(() => '?').join(',')})`,
      );
      statements.set(key, s);
    }
    return s;
  };
  const writeAll = db.transaction((batch: TableRows[]) => {
    for (const t of batch) {
      const s = statement(t);
      for (const row of t.rows) s.run(row);
    }
  });
  return {
    async write(batch) {
      writeAll(batch);
    },
    async close() {
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    },
  };
}
