import type { Knex } from 'knex';
import type { EventBus } from '../ports/event-bus';
import type { Invalidation } from '../ports/invalidation';
import { getLastCacheInvalidationId, insertCacheInvalidations, listCacheInvalidationsAfter } from '../queries/cache-invalidations';
import type { Caches } from './index';

/**
 * Invalidations between processes that share a database but not a bus: the
 * admin CLI changes rows (a new API key, a new organization, `cache flush`
 * after hand-edited SQL) while servers hold copies in memory. The CLI
 * records what its actions invalidated in cache_invalidations (migration
 * 023); every server reads the rows added since its last look, every
 * CACHE_POLL_MS, and applies them. The bounded TTL of every cache
 * (CACHE_TTL_SECONDS) is the backstop for SQL changed by hand without a
 * flush.
 */

const KEEP_SECONDS = 3600;
/** More than this many from one command are recorded as one "everything". */
const MAX_RECORDED = 1000;
const BATCH = 1000;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Records invalidations for the running servers (the CLI; `cache flush` records `{kind: 'all'}`). */
export async function recordInvalidations(db: Knex, invs: readonly Invalidation[]): Promise<void> {
  const list = invs.length > MAX_RECORDED ? [{ kind: 'all' } as const] : invs;
  const now = nowSeconds();
  await insertCacheInvalidations(
    db,
    list.map((inv) => JSON.stringify(inv)),
    now,
    now - KEEP_SECONDS,
  );
}

/**
 * Collects what this process's actions invalidate on `bus`, to record with
 * `flush()` before the process ends (the CLI, whose own caches die with it).
 */
export function collectForOtherProcesses(bus: EventBus, db: Knex): { flush(): Promise<void> } {
  const seen: Invalidation[] = [];
  const stop = bus.onInvalidate((inv) => seen.push(inv));
  return {
    async flush() {
      stop();
      if (seen.length) await recordInvalidations(db, seen);
    },
  };
}

/**
 * Applies what other processes recorded, every `intervalMs`, starting after
 * the newest row present now (the caches start empty). After a failed read
 * (the database unreachable for a while) every cache is emptied: rows may
 * have been missed. Returns the stop function.
 */
export function startInvalidationPoll(db: Knex, caches: Caches, intervalMs: number, onError: (err: unknown) => void): () => void {
  let lastId: number | null = null;
  let failed = false;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const poll = async () => {
    try {
      if (lastId === null) lastId = await getLastCacheInvalidationId(db);
      for (;;) {
        const rows = await listCacheInvalidationsAfter(db, lastId, BATCH);
        if (failed) {
          caches.apply({ kind: 'all' });
          failed = false;
        }
        for (const row of rows) {
          lastId = row.id;
          caches.apply(parseInvalidation(row.payload));
        }
        if (rows.length < BATCH) break;
      }
    } catch (err) {
      failed = true;
      onError(err);
    }
    if (!stopped) timer = setTimeout(() => void poll(), intervalMs).unref();
  };
  void poll();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/** A recorded invalidation; anything unreadable (a newer format) empties every cache rather than be ignored. */
export function parseInvalidation(payload: string): Invalidation {
  try {
    const v = JSON.parse(payload) as Invalidation;
    if (v.kind === 'user' && Array.isArray(v.userIds)) return v;
    if (v.kind === 'channel' && Array.isArray(v.channelIds)) return v;
    if (v.kind === 'messages' && Array.isArray(v.messageIds)) return v;
    if (v.kind === 'topics' && Array.isArray(v.recipientIds)) return v;
    if (v.kind === 'realm' && typeof v.realmId === 'number') return v;
    if (v.kind === 'linkifiers' && typeof v.realmId === 'number') return v;
    if (v.kind === 'received' && (v.userIds === 'all' || Array.isArray(v.userIds))) return v;
    if ((v.kind === 'realm_domains' || v.kind === 'playgrounds') && typeof v.realmId === 'number') return v;
    if (v.kind === 'all') return v;
  } catch {
    // falls through
  }
  return { kind: 'all' };
}
