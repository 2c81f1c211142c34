import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import type { ProfileValueRow } from '../queries/profile-fields';
import { getOwnUserExtras } from '../queries/users';
import { RowCache } from './row-cache';

/** What GET /users/me adds to the caller's row. */
export interface OwnUserExtras {
  readonly realmId: number;
  /** The newest message the user holds a row for; -1 when none. */
  readonly maxMessageId: number;
  /** The user's custom profile field values, by field id. */
  readonly values: readonly ProfileValueRow[];
}

/**
 * GET /users/me's extras by user id. Without this cache the endpoint's one
 * statement (the newest user_messages row and the profile values) was its
 * largest cost: writing it to the database and reading the answer took a
 * quarter of the request's CPU.
 *
 * Exact: every statement that adds or removes user_messages rows declares a
 * `received` invalidation naming whose rows they are (or `'all'`, for the
 * bulk statements that do not read it: deletions, moves into a channel);
 * profile values are written with a `user` invalidation. A send drops its
 * recipients' entries, so a user who keeps receiving messages reads the
 * database each time; the cache pays for itself on the many reads between.
 */
export class OwnUserCache extends RowCache<number, OwnUserExtras> {
  constructor(db: Knex, max: number, ttlMs: number) {
    super(db, 'own-users', max, ttlMs, (e) => e.realmId);
  }

  async get(user: { id: number; realm_id: number }): Promise<OwnUserExtras> {
    const found = await this.cache.load(user.id, async () => {
      const { maxMessageId, values } = await getOwnUserExtras(this.db, user);
      return Object.freeze({ realmId: user.realm_id, maxMessageId, values: Object.freeze(values.map((v) => Object.freeze(v))) });
    });
    return found!;
  }

  protected drop(inv: Invalidation): void {
    if (inv.kind === 'received' || inv.kind === 'user') {
      const ids = inv.userIds;
      if (ids === 'all') this.cache.clear();
      else for (const id of ids) this.cache.delete(id);
    }
  }
}
