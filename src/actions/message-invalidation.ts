import type { Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';

/**
 * After commit, the per-process message caches drop these messages' dicts
 * (src/cache/messages.ts). Call it before queueing the change's events:
 * after-commit hooks run in order, and a client that refetches on an event
 * must not be served the old dict. `ids` is read at commit, so an action may
 * call this first and settle the set (a topic's messages) later.
 */
export function invalidateMessagesAfterCommit(tx: Tx, bus: EventBus, ids: () => readonly number[]): void {
  tx.afterCommit(() => {
    const messageIds = ids();
    if (messageIds.length) bus.invalidate({ kind: 'messages', messageIds });
  });
}
