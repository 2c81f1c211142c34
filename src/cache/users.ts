import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { getUsersByIds } from '../queries/messages';
import type { UserRow } from '../queries/rows';
import { RowCache } from './row-cache';

/** User rows by id, as message pages and event polls read their senders and participants. */
export type UserLookup = (ids: Iterable<number>) => Promise<Map<number, UserRow>>;

/**
 * User rows by id: the people a page of messages names (senders, DM
 * participants), typing notifications' participants, and the users that
 * realm_user events add. Their names, emails and avatars change without
 * touching any message, so they are not part of a cached message dict;
 * without this cache every GET /messages read them again (one statement
 * per page, a fifth of a cached page's cost at 1M messages).
 *
 * Dropped by the invalidations of the user (every write to the users table
 * declares one: src/queries/users.ts) and of their organization. Rows are
 * exact except last_active_time, which only SQL reads. Frozen: a reader that
 * tried to change a shared row would fail loudly.
 */
export class UserCache extends RowCache<number, UserRow> {
  /** The lookup as a function, for code that is handed one (src/access/message-dicts.ts). */
  readonly lookup: UserLookup;

  constructor(db: Knex, max: number, ttlMs: number) {
    super(db, 'users', max, ttlMs, (u) => u.realm_id);
    this.lookup = (ids) => this.getMany(ids);
  }

  getMany(ids: Iterable<number>): Promise<Map<number, UserRow>> {
    return this.cache.loadMany(ids, async (missing) => {
      const rows = await getUsersByIds(this.db, missing);
      for (const row of rows.values()) Object.freeze(row);
      return rows;
    });
  }

  protected drop(inv: Invalidation): void {
    if (inv.kind === 'user') for (const id of inv.userIds) this.cache.delete(id);
  }
}
