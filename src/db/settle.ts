import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { dialectOf } from './connection';

/** What the database still has to do after a bulk load, and what settling it did. */
export interface SettleReport {
  /** Tables whose statistics were recomputed (none on SQLite: see below). */
  analyzed: number;
  /** InnoDB pages not yet written to disk, before and after (MariaDB). */
  dirtyPagesBefore: number | null;
  dirtyPagesAfter: number | null;
  /** Pages in the buffer pool (MariaDB), to read the dirty counts against. */
  bufferPoolPages: number | null;
  /** Old row versions waiting for purge, before and after (MariaDB). */
  historyBefore: number | null;
  historyAfter: number | null;
  /** Whether the dirty pages were written at full speed (needs an account that may set globals). */
  forcedFlush: boolean;
  seconds: number;
}

/** A database's state as read with no privilege: the figures `settleAfterBulkLoad` waits on. */
export interface BackgroundWork {
  dirtyPages: number;
  bufferPoolPages: number;
  history: number;
}

/**
 * Dirty pages and purge backlog of a MariaDB server; null on SQLite, and
 * where the server does not report all three (MySQL has no
 * Innodb_history_list_length): a figure missing is not a figure of 0.
 */
export async function readBackgroundWork(db: Knex): Promise<BackgroundWork | null> {
  if (dialectOf(db) !== 'mysql') return null;
  const [rows] = (await db.raw(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_dirty', 'Innodb_buffer_pool_pages_total', 'Innodb_history_list_length')",
  )) as [Array<{ Variable_name: string; Value: string }>];
  const value = (name: string) => {
    const row = rows.find((r) => r.Variable_name === name);
    return row === undefined ? null : Number(row.Value);
  };
  const dirtyPages = value('Innodb_buffer_pool_pages_dirty');
  const bufferPoolPages = value('Innodb_buffer_pool_pages_total');
  const history = value('Innodb_history_list_length');
  if (dirtyPages === null || bufferPoolPages === null || history === null) return null;
  return { dirtyPages, bufferPoolPages, history };
}

/** Settled: under 1 % of the buffer pool dirty and a purge backlog a few transactions long. */
export const isSettled = (w: BackgroundWork): boolean => w.dirtyPages <= w.bufferPoolPages / 100 && w.history <= 1000;

/**
 * Leaves a database that was just loaded in bulk (the benchmark generator;
 * an import) as a running one would be, instead of doing that work during
 * its first hours of use.
 *
 * - Statistics of every table are recomputed (ANALYZE): InnoDB samples a
 *   table again only once a tenth of it changed, so a table filled in one
 *   go may keep the statistics of a part of it.
 * - MariaDB: the load leaves the buffer pool full of pages changed in
 *   memory and not yet written. The page cleaner writes them at
 *   `innodb_io_capacity` pages a second once the server is idle (200 by
 *   default: 11 minutes for a 2 GiB pool), and until then reads that need
 *   a free page wait for one to be written, and the writing takes CPU the
 *   requests need. With `admin` (an account that may set global
 *   variables), they are written at once: `innodb_max_dirty_pages_pct` is
 *   set to 0 until they are, then put back. Without it, this waits for the
 *   page cleaner. Either way it also waits for purge to catch up (old row
 *   versions of the load's updates and deletions), up to `maxWaitMs`.
 * - SQLite: a checkpoint of the write-ahead log into the file, and no
 *   ANALYZE: Parley never analyses a SQLite database in use, and its
 *   queries are planned for SQLite's own estimates, so a loaded database
 *   with statistics would be planned unlike any other.
 */
export async function settleAfterBulkLoad(
  db: Knex,
  opts: { admin?: Knex; maxWaitMs?: number; progress?: (line: string) => void } = {},
): Promise<SettleReport> {
  const started = Date.now();
  const maxWaitMs = opts.maxWaitMs ?? 15 * 60_000;
  if (dialectOf(db) !== 'mysql') {
    await db.raw('PRAGMA wal_checkpoint(TRUNCATE)');
    return {
      analyzed: 0,
      dirtyPagesBefore: null,
      dirtyPagesAfter: null,
      bufferPoolPages: null,
      historyBefore: null,
      historyAfter: null,
      forcedFlush: false,
      seconds: (Date.now() - started) / 1000,
    };
  }
  const tables = (await db('information_schema.TABLES')
    .where({ TABLE_SCHEMA: db.raw('DATABASE()'), TABLE_TYPE: 'BASE TABLE' })
    .pluck('TABLE_NAME')) as string[];
  // One statement for all of them: each table is sampled (innodb_stats_persistent_sample_pages), not read whole.
  // MariaDB reports a table it could not analyse as a row, not as an error.
  if (tables.length) {
    const [results] = (await db.raw(`ANALYZE TABLE ${tables.map(() => '??').join(', ')}`, tables)) as [
      Array<{ Table: string; Msg_type: string; Msg_text: string }>,
    ];
    const failed = results.find((r) => r.Msg_type === 'error');
    if (failed) throw new Error(`ANALYZE TABLE ${failed.Table}: ${failed.Msg_text}`);
  }
  const before = await readBackgroundWork(db);
  if (!before) throw new Error('the server does not report its dirty pages and purge backlog (SHOW GLOBAL STATUS)');
  let forcedFlush = false;
  let restore: (() => Promise<void>) | null = null;
  if (opts.admin) {
    const admin = opts.admin;
    const [[old]] = (await admin.raw(
      'SELECT @@GLOBAL.innodb_max_dirty_pages_pct AS pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm AS lwm',
    )) as [Array<{ pct: number; lwm: number }>];
    // Named before anything is set, so that a failure half-way still puts both back.
    opts.progress?.(`innodb_max_dirty_pages_pct ${old!.pct} and _lwm ${old!.lwm} set to 0 until the pages are written`);
    restore = async () => {
      await admin.raw('SET GLOBAL innodb_max_dirty_pages_pct = ?', [Number(old!.pct)]);
      await admin.raw('SET GLOBAL innodb_max_dirty_pages_pct_lwm = ?', [Number(old!.lwm)]);
    };
  }
  let now = before;
  const wait = async (interrupted: AbortSignal) => {
    if (opts.admin) {
      // lwm first: it may not exceed the maximum. Each checked for an interruption, so that
      // nothing is set after the old values are put back.
      if (interrupted.aborted) return;
      await opts.admin.raw('SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0');
      if (interrupted.aborted) return;
      await opts.admin.raw('SET GLOBAL innodb_max_dirty_pages_pct = 0');
      forcedFlush = true;
    }
    while (!interrupted.aborted && !isSettled(now) && Date.now() - started < maxWaitMs) {
      opts.progress?.(`settling: ${now.dirtyPages} of ${now.bufferPoolPages} pages dirty, ${now.history} old row versions to purge`);
      await sleep(2000, undefined, { signal: interrupted }).catch(() => undefined);
      if (!interrupted.aborted) now = (await readBackgroundWork(db)) ?? now;
    }
  };
  // Ctrl-C during the wait (a generator's settling takes minutes) would otherwise leave the
  // server flushing as hard as it can for good.
  if (restore) await restoringOnSignal(restore, wait);
  else await wait(new AbortController().signal);
  return {
    analyzed: tables.length,
    dirtyPagesBefore: before.dirtyPages,
    dirtyPagesAfter: now.dirtyPages,
    bufferPoolPages: now.bufferPoolPages,
    historyBefore: before.history,
    historyAfter: now.history,
    forcedFlush,
    seconds: (Date.now() - started) / 1000,
  };
}

/**
 * Runs `work`, and `restore` after it, whether it succeeds, fails or the
 * process is interrupted (SIGINT, SIGTERM) meanwhile. On a signal, `work`
 * is told through its AbortSignal and awaited (a statement in flight ends
 * first, so nothing it sets comes after the restore), `restore` runs, and
 * then the signal does what it would have done: ends the process, unless
 * someone else listens for it (then the caller carries on, restored). A
 * second signal during the restore ends the process as usual.
 */
export async function restoringOnSignal<T>(restore: () => Promise<void>, work: (interrupted: AbortSignal) => Promise<T>): Promise<T> {
  let restored: Promise<void> | null = null;
  const restoreOnce = () => (restored ??= restore());
  const interruption = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  const onSignal = (signal: NodeJS.Signals) => {
    stopWatching();
    interruption.abort();
    void running
      .catch(() => undefined)
      .then(restoreOnce)
      .catch((err: unknown) => process.stderr.write(`could not restore before ${signal}: ${String(err)}\n`))
      .finally(() => {
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
  };
  const stopWatching = () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const result = work(interruption.signal);
    running = result;
    return await result;
  } finally {
    stopWatching();
    await restoreOnce();
  }
}
