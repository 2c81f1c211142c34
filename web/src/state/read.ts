import { api, ok } from '../api/client';
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

async function flush(): Promise<void> {
  timer = null;
  const ids = [...pending];
  pending.clear();
  if (ids.length === 0) return;
  removeUnread(ids);
  updateFlags(ids, 'read', 'add');
  await ok(api.POST('/messages/flags', { body: { messages: ids, op: 'add', flag: 'read' } }));
}
