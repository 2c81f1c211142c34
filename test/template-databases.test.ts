/**
 * Test databases are copies of a migrated template (test/support/template-databases.ts),
 * not migrated one by one: a copy must be the very schema the migrations build.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb, type Dialect } from '../src/db/connection';
import { migrateLatest } from '../src/db/migrate';
import { eachDatabase, freshDatabase, freshMysqlDatabase, type TestDb } from './support/databases';

/** Every table, index and trigger as the engine states it, and the migrations recorded as applied. */
async function schemaOf(db: Knex, dialect: Dialect): Promise<unknown> {
  const applied = await db('knex_migrations').orderBy('id').pluck('name');
  if (dialect === 'sqlite') {
    const objects = await db.raw(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`);
    return { objects, applied };
  }
  const [tables] = await db.raw(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name`,
  );
  const created: string[] = [];
  for (const { name } of tables as Array<{ name: string }>) {
    const [[row]] = await db.raw(`SHOW CREATE TABLE \`${name}\``);
    created.push(String(row['Create Table']).replace(/ AUTO_INCREMENT=\d+/, ''));
  }
  const [triggers] = await db.raw(`SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = DATABASE()`);
  return { created, triggers, applied };
}

/** A database migrated from nothing, as a server's first start makes it. */
async function migratedDatabase(dialect: Dialect): Promise<TestDb> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-migrated-'));
    const db = createDb({ databaseUrl: null, dataDir: dir });
    await migrateLatest(db);
    return { db, drop: async () => (await db.destroy(), fs.rmSync(dir, { recursive: true, force: true })) };
  }
  const mysql = await freshMysqlDatabase();
  const db = createDb({ databaseUrl: mysql.url, dataDir: '' });
  await migrateLatest(db);
  return { db, drop: async () => (await db.destroy(), await mysql.drop()) };
}

eachDatabase('test databases', (dialect) => {
  it('a fresh test database has the schema and migration records of one migrated from nothing', async () => {
    const copy = await freshDatabase(dialect);
    const migrated = await migratedDatabase(dialect);
    try {
      const expected = await schemaOf(migrated.db, dialect);
      expect((expected as { applied: string[] }).applied.length).toBeGreaterThan(20);
      expect(await schemaOf(copy.db, dialect)).toEqual(expected);
      // The server finds nothing left to migrate.
      expect(await migrateLatest(copy.db)).toEqual([]);
    } finally {
      await copy.drop();
      await migrated.drop();
    }
  }, 60000);

  it('each fresh test database is a database of its own, its ids starting at 1', async () => {
    const a = await freshDatabase(dialect);
    const b = await freshDatabase(dialect);
    try {
      const [id] = await a.db('realms').insert({ string_id: 'a', name: 'A', description: '', date_created: 1 });
      expect(Number(id)).toBe(1);
      expect(await b.db('realms').count({ n: '*' })).toEqual([{ n: 0 }]);
    } finally {
      await a.drop();
      await b.drop();
    }
  });
});
