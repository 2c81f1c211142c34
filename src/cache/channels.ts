import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { type ChannelForSending, type ChannelRow, getChannelForSending, listChannelsForSending } from '../queries/channels';
import { RowCache } from './row-cache';

export interface ChannelToSend {
  channel: ChannelRow;
  /** Active subscribers who are active users: a channel message's recipients. */
  subscriberIds: readonly number[];
  /** Of those, the long-idle ones a send may leave without a row (ADR 0058); null: none. */
  idleSubscriberIds: ReadonlySet<number> | null;
}

/**
 * Channels as POST /messages addresses them (by id or by name), with their
 * active subscribers. Dropped by the channel's invalidations (its row, its
 * subscriptions, a subscriber's deactivation: src/queries/channels.ts and
 * users.ts say so where they write) and by its organization's. A channel
 * not found is not stored.
 */
export class ChannelCache extends RowCache<string, ChannelToSend> {
  constructor(db: Knex, max: number, ttlMs: number) {
    super(db, 'channels', max, ttlMs, (c) => c.channel.realm_id);
  }

  forSending(realmId: number, to: number | string): Promise<ChannelToSend | undefined> {
    const key = typeof to === 'number' ? `${realmId}#${to}` : `${realmId}:${to.trim().toLowerCase()}`;
    return this.cache.load(key, async () => {
      const found = await getChannelForSending(this.db, realmId, to);
      return found && frozen(found);
    });
  }

  /** Several channels by id, those not cached read in one statement (the channels a page of messages is in). */
  async byIds(realmId: number, ids: Iterable<number>): Promise<Map<number, ChannelToSend>> {
    const idOf = new Map<string, number>();
    for (const id of ids) idOf.set(`${realmId}#${id}`, id);
    const found = await this.cache.loadMany(idOf.keys(), async (missing) => {
      const read = await listChannelsForSending(
        this.db,
        realmId,
        missing.map((k) => idOf.get(k)!),
      );
      return new Map(read.map((c) => [`${realmId}#${c.channel.id}`, frozen(c)]));
    });
    return new Map([...found.values()].map((c) => [c.channel.id, c]));
  }

  protected drop(inv: Invalidation): void {
    if (inv.kind === 'channel') {
      const ids = new Set(inv.channelIds);
      this.cache.deleteWhere((_, c) => ids.has(c.channel.id));
    }
  }
}

/** Entries are shared by every request: frozen, so that no caller changes them for the others. */
function frozen(c: ChannelForSending): ChannelToSend {
  // A Set cannot be frozen; nothing outside this module is handed one it may change (ReadonlySet).
  return Object.freeze({
    channel: Object.freeze(c.channel),
    subscriberIds: Object.freeze(c.subscriberIds),
    idleSubscriberIds: c.idleSubscriberIds,
  });
}
