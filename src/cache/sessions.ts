import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { findSessionByKeyHash, type SessionLookup } from '../queries/sessions';
import { RowCache } from './row-cache';

/**
 * Browser sessions by the SHA-256 of their key, with their user's API key
 * (ADR 0053). Every query that deletes a session declares a `user`
 * invalidation of its user (src/queries/sessions.ts), which reaches every
 * node's cache through the bus as the caller cache's do: a session ended
 * anywhere is dropped everywhere, as a deactivated account's caller is. An
 * unknown key is never stored. The entry is this process's copy:
 * authentication moves its `last_active_at` when it records activity.
 */
export class SessionCache extends RowCache<string, SessionLookup> {
  constructor(db: Knex, max: number, ttlMs: number) {
    super(db, 'sessions', max, ttlMs, (s) => s.realm_id);
  }

  get(keyHash: string): Promise<SessionLookup | undefined> {
    return this.cache.load(keyHash, () => findSessionByKeyHash(this.db, keyHash));
  }

  protected drop(inv: Invalidation): void {
    if (inv.kind === 'user') {
      const ids = new Set(inv.userIds);
      this.cache.deleteWhere((_, s) => ids.has(s.user_id));
    }
  }
}
