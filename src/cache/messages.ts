import type { MessageDict } from '../serializers/message-dicts';
import type { Caches } from './index';
import { InvalidatingCache } from './invalidating-cache';

/**
 * Rendered message dicts by message id (Zulip keeps the same in memcached,
 * keyed by id and edit version): the part of a message that is the same for
 * every reader (src/serializers/message-dicts.ts). Every action that changes
 * a stored message — edit, move, delete, reaction, submessage — publishes
 * `{kind: 'messages'}` for the ids after commit, which drops them here; an
 * entry is therefore always the message's current version, and the id alone
 * is the key. CACHE_MESSAGES bounds it (least recently used go first); 0
 * turns it off (GET /messages then reads every message).
 */
export function createMessageCache(caches: Caches, max: number): InvalidatingCache<number, MessageDict> | null {
  if (max <= 0) return null;
  const cache = new InvalidatingCache<number, MessageDict>('messages', max);
  return caches.register(cache, (inv) => {
    if (inv.kind === 'messages') for (const id of inv.messageIds) cache.delete(id);
  });
}
