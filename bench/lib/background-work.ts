import { setTimeout as sleep } from 'node:timers/promises';
import { createDb } from '../../src/db/connection';
import { isSettled, readBackgroundWork, type BackgroundWork } from '../../src/db/settle';
import type { Target } from './dataset';
import { fmtInt } from './progress';

/** Dirty pages and purge backlog of the benchmark's database when measuring begins (null on SQLite). */
export async function backgroundWorkOf(target: Target): Promise<BackgroundWork | null> {
  if (target.db === 'sqlite') return null;
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    return await readBackgroundWork(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Waits, up to `maxMs`, until purge has caught up (a backlog of at most 1,000
 * old row versions) and returns the state measuring begins in. A run that
 * starts by deleting the previous run's messages (millions of rows on the
 * big dataset) would otherwise measure that purge with its own sends. Dirty
 * pages are not waited for: the page cleaner writes them at its own pace,
 * during any run; the report gives their share.
 */
export async function afterPurge(target: Target, maxMs: number): Promise<BackgroundWork | null> {
  const until = Date.now() + maxMs;
  for (;;) {
    const w = await backgroundWorkOf(target);
    if (!w || w.history <= 1000 || Date.now() >= until) return w;
    await sleep(1000);
  }
}

export function backgroundWorkText(w: BackgroundWork): string {
  const pct = (100 * w.dirtyPages) / Math.max(1, w.bufferPoolPages);
  return (
    `At the start ${pct.toFixed(1)} % of the buffer pool was dirty (${fmtInt(w.dirtyPages)} pages) and ${fmtInt(w.history)} old row ` +
    `versions awaited purge: ${isSettled(w) ? 'settled' : '**not settled** (the figures include that work)'}.`
  );
}
