import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { listMutingUserIds } from '../queries/muted-users';
import { InvalidatingCache } from './invalidating-cache';

interface Muting {
  readonly ids: ReadonlySet<number>;
}

const NOBODY: ReadonlySet<number> = new Set();

/**
 * Who muted each user, by the muted user's id (Zulip's get_muting_users,
 * which Zulip caches too): every send reads its sender's, to mark the
 * message read for those users (src/actions/messages.ts), so a warm send
 * reads nothing more for it. Muting and unmuting declare a `user`
 * invalidation of the muted user (src/queries/muted-users.ts).
 */
export class MutingUsersCache {
  readonly cache: InvalidatingCache<number, Muting>;

  constructor(
    private readonly db: Knex,
    max: number,
    ttlMs: number,
  ) {
    this.cache = new InvalidatingCache('muting_users', max, ttlMs);
  }

  async get(mutedUserId: number): Promise<ReadonlySet<number>> {
    const entry = await this.cache.load(mutedUserId, async () =>
      Object.freeze({ ids: new Set(await listMutingUserIds(this.db, mutedUserId)) }),
    );
    return entry?.ids ?? NOBODY;
  }

  apply(inv: Invalidation): void {
    // An id left behind by a removed muter is harmless: only a message's receivers get rows.
    if (inv.kind === 'user') for (const id of inv.userIds) this.cache.delete(id);
  }
}
