import path from 'node:path';
import { RETENTION_LEASE, RETENTION_LEASE_MS, runRetention, type RetentionRun } from '../../src/actions/retention';
import type { AppContext } from '../../src/context';
import type { Dialect } from '../../src/db/connection';
import { inTransaction } from '../../src/db/transaction';
import { takeLease } from '../../src/queries/leases';
import { ManualClock } from './clock';
import { newInstance, type Instance } from './instances';
import { startTestServer, type TestServer } from './server';
import { copyMysqlTemplate, copySqliteTemplate } from './template-databases';

/** What a run of the archiver uses of a context. */
export type RetentionContext = Pick<AppContext, 'db' | 'bus' | 'clock' | 'config'>;

/**
 * A test server for the retention archiver, archiving `batchSize` messages a
 * transaction, on an installation's database and DATA_DIR
 * (test/support/instances.ts): the CLI can open them too, as an operator's.
 */
export async function startRetentionServer(dialect: Dialect, batchSize: number): Promise<{ instance: Instance; t: TestServer }> {
  const instance = await newInstance(dialect);
  if (instance.databaseUrl) await copyMysqlTemplate(instance.databaseUrl);
  else await copySqliteTemplate(path.join(instance.dataDir, 'parley.sqlite3'));
  const t = await startTestServer(
    dialect,
    { db: instance.open(), drop: () => instance.drop() },
    { dataDir: instance.dataDir, config: { retentionBatchSize: batchSize } },
  );
  return { instance, t };
}

/** One run of the archiver as the process `holder`. */
export const retentionRun = (ctx: RetentionContext, holder = 'node-a:1:test'): Promise<RetentionRun> => runRetention(ctx, { holder });

/**
 * Another node takes the retention lease (it is archiving, or died while it
 * was): it holds it for RETENTION_LEASE_MS on the returned clock. `other` is
 * the server's context on that clock, a process that can watch it lapse.
 */
export async function holdLeaseElsewhere(t: TestServer): Promise<{ clock: ManualClock; other: AppContext }> {
  const clock = new ManualClock();
  const taken = await inTransaction(t.ctx.db, (tx) =>
    takeLease(tx.trx, RETENTION_LEASE, 'node-b:9:x', clock.now(), clock.now() + RETENTION_LEASE_MS),
  );
  if (!taken) throw new Error('the retention lease was not free to take');
  return { clock, other: { ...t.ctx, clock } };
}
