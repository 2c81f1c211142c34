import type { Knex } from 'knex';
import type { Invalidation } from '../ports/invalidation';
import { listTopicSummaries, type TopicSummaryRow } from '../queries/topic-summaries';
import { InvalidatingCache } from './invalidating-cache';

interface TopicList {
  readonly rows: readonly Readonly<TopicSummaryRow>[];
}

/**
 * Channels' topic lists by recipient id, as channel_topics holds them
 * (ADR 0055): every app asks for a channel's list when it is opened, and a
 * busy channel has thousands of topics. A send, move, deletion or restore
 * in a channel is a `topics` invalidation (src/queries/topic-summaries.ts),
 * which reaches every node before the change's events.
 */
export class TopicListCache {
  readonly cache: InvalidatingCache<number, TopicList>;

  constructor(
    private readonly db: Knex,
    max: number,
    ttlMs: number,
  ) {
    this.cache = new InvalidatingCache('topic-lists', max, ttlMs);
  }

  async get(recipientId: number): Promise<readonly Readonly<TopicSummaryRow>[]> {
    const entry = await this.cache.load(recipientId, async () => {
      const rows = await listTopicSummaries(this.db, recipientId);
      return Object.freeze({ rows: Object.freeze(rows.map((r) => Object.freeze(r))) });
    });
    return entry?.rows ?? [];
  }

  apply(inv: Invalidation): void {
    if (inv.kind === 'topics') for (const id of inv.recipientIds) this.cache.delete(id);
  }
}
