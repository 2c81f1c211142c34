/**
 * Settling a database after a bulk load (src/db/settle.ts): on MariaDB
 * every table's statistics recomputed and the wait until the load's dirty
 * pages are written and purge has caught up; on SQLite the log checkpointed.
 */
import fs from 'node:fs';
import { isSettled, readBackgroundWork, settleAfterBulkLoad } from '../src/db/settle';
import { dialectOf } from '../src/db/connection';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';

eachDatabase('settling after a bulk load', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('MariaDB: recomputes the statistics of a table loaded in one go and reads the server state; SQLite: checkpoints the log', async () => {
    const db = t.ctx.db;
    const mysql = dialectOf(db) === 'mysql';
    // Without automatic recalculation, only an ANALYZE gives this table statistics.
    await db.raw(`CREATE TABLE settle_probe (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)${mysql ? ' STATS_AUTO_RECALC=0' : ''}`);
    await db.raw('CREATE INDEX settle_probe_v ON settle_probe (v)');
    try {
      const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i + 1, v: i % 7 }));
      await db.batchInsert('settle_probe', rows, 500);
      // A short wait: the suite's other databases share the server and keep it busy.
      const report = await settleAfterBulkLoad(db, { maxWaitMs: 3000 });
      if (mysql) {
        // The primary key's cardinality comes from the persistent statistics (TABLE_ROWS does not:
        // it is counted live). Without an ANALYZE it stays at the empty table's 2.
        const key = await db('information_schema.STATISTICS')
          .where({ TABLE_SCHEMA: db.raw('DATABASE()'), TABLE_NAME: 'settle_probe', INDEX_NAME: 'PRIMARY' })
          .first('CARDINALITY');
        expect(Number(key.CARDINALITY)).toBeGreaterThan(2500);
        const tables = await db('information_schema.TABLES')
          .where({ TABLE_SCHEMA: db.raw('DATABASE()'), TABLE_TYPE: 'BASE TABLE' })
          .count({ n: '*' });
        expect(report.analyzed).toBe(Number(tables[0]!.n));
        const work = (await readBackgroundWork(db))!;
        expect(work.bufferPoolPages).toBeGreaterThan(0);
        // The state is read, not asserted: other suites' databases share the server. Settling
        // returned within its bound, having reached a settled state or said what remained.
        expect(report.seconds).toBeLessThan(8);
        expect(
          isSettled({ dirtyPages: report.dirtyPagesAfter!, bufferPoolPages: report.bufferPoolPages!, history: report.historyAfter! }) ||
            report.seconds >= 3,
        ).toBe(true);
      } else {
        // The load's pages are in the write-ahead log until a checkpoint moves them into the file.
        const [main] = (await db.raw('PRAGMA database_list')) as Array<{ name: string; file: string }>;
        expect(fs.statSync(`${main!.file}-wal`).size).toBe(0);
        expect(report.analyzed).toBe(0);
        expect(await readBackgroundWork(db)).toBeNull();
      }
    } finally {
      await db.raw('DROP TABLE settle_probe');
    }
  });
});
