import { api, ApiFailure, ok } from '../api/client';
import { removeUnread } from './unread';
import { updateFlags } from './messages';

/**
 * Marking read as messages are seen: ids on screen while the page is
 * visible and focused are collected and sent in one POST /messages/flags
 * a moment later (one request for a screenful, not one per message).
 */
const pending = new Set<number>();
let timer: ReturnType<typeof setTimeout> | null = null;

export function markSeen(ids: readonly number[]): void {
  if (ids.length === 0 || document.visibilityState !== 'visible' || !document.hasFocus()) return;
  for (const id of ids) pending.add(id);
  if (!timer) timer = setTimeout(flush, 400);
}

/** A request that could not reach the server is sent again, after a pause that doubles (up to a minute). */
let retryMs = 2000;

async function flush(): Promise<void> {
  timer = null;
  const ids = [...pending];
  pending.clear();
  if (ids.length === 0) return;
  // Shown read at once; the server is told in the background.
  removeUnread(ids);
  updateFlags(ids, 'read', 'add');
  try {
    await ok(api.POST('/messages/flags', { body: { messages: ids, op: 'add', flag: 'read' } }));
    retryMs = 2000;
  } catch (e) {
    // Unreachable (a restart, a lost network): kept for the next try. A refusal (a message
    // deleted meanwhile) is not retried; the next register brings the server's counts.
    if (!(e instanceof ApiFailure) || e.status !== 0) return;
    for (const id of ids) pending.add(id);
    timer ??= setTimeout(flush, retryMs);
    retryMs = Math.min(retryMs * 2, 60_000);
  }
}
