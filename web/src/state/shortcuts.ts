import { api, ok } from '../api/client';
import { channelNarrow, COMBINED_FEED, dmNarrow, isSearch, termOf } from '../lib/narrow';
import { toggleReaction } from '../components/Reactions';
import { view } from './messages';
import { go, lastPlace, narrow, overlay } from './navigation';
import { me, settings, subscriptions, topicKey, topicPolicies, VISIBILITY } from './store';
import { actingOn, helpOpen, listControl, requestCompose, selectedId, sidebarOpen } from './ui';
import { dmKey, messageDmKey, unreadWhere } from './unread';

/**
 * Zulip's keyboard shortcuts, where Parley has the feature. They act on the
 * selected message; none fires while the user types in a field, or holds
 * Ctrl, Alt or Meta (the browser's own shortcuts).
 */
export const SHORTCUTS: readonly { keys: string; what: string }[] = [
  { keys: '/', what: 'Search' },
  { keys: 'c', what: 'New message in the current topic' },
  { keys: 'x', what: 'New direct message' },
  { keys: 'j or ↓', what: 'Next message' },
  { keys: 'k or ↑', what: 'Previous message' },
  { keys: 'r or Enter', what: 'Reply to the selected message' },
  { keys: 'e', what: 'Edit the selected message (your own)' },
  { keys: '*', what: 'Star or unstar the selected message' },
  { keys: '+ or =', what: 'React 👍 to the selected message' },
  { keys: 'n', what: 'Next unread topic' },
  { keys: 'p', what: 'Next unread direct message conversation' },
  { keys: 'Esc', what: 'Close a menu or settings; leave a search' },
  { keys: '?', what: 'This list of shortcuts' },
];

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

function selected() {
  const v = view.value;
  if (!v || selectedId.value === null) return null;
  const m = v.messages.find((x) => x.id === selectedId.value);
  return m ? { m, flags: v.flags.get(m.id) ?? new Set<string>() } : null;
}

function moveSelection(step: 1 | -1): void {
  const messages = view.value?.messages ?? [];
  if (messages.length === 0) return;
  const at = messages.findIndex((m) => m.id === selectedId.value);
  const next = at < 0 ? (step > 0 ? 0 : messages.length - 1) : Math.min(messages.length - 1, Math.max(0, at + step));
  selectedId.value = messages[next].id;
  listControl.scrollTo(messages[next].id);
}

function reply(): void {
  const s = selected();
  if (!s) return requestCompose({ kind: 'current' });
  if (s.m.type === 'stream' && s.m.stream_id !== undefined) requestCompose({ kind: 'topic', channelId: s.m.stream_id, topic: s.m.subject });
  else
    requestCompose({
      kind: 'dm',
      userIds: messageDmKey(s.m, me.value?.user_id ?? 0)
        .split(',')
        .map(Number),
    });
}

/** The next unread conversation after the open one, in the order of the oldest unread message of each. */
function nextUnread(kind: 'channel' | 'dm'): void {
  const myId = me.value?.user_id ?? 0;
  const n = narrow.value;
  const channel = termOf(n, 'channel')?.operand;
  const topic = termOf(n, 'topic')?.operand;
  const dm = termOf(n, 'dm')?.operand;
  const currentKey =
    typeof channel === 'number' && topic !== undefined ? topicKey(channel, String(topic)) : Array.isArray(dm) ? dmKey(dm, myId) : null;
  const mutedChannels = new Set(subscriptions.value.filter((s) => s.is_muted).map((s) => s.stream_id));
  const ids = [...unreadWhere().keys()].sort((a, b) => a - b);
  for (const id of ids) {
    const w = unreadWhere().get(id);
    if (!w || w.kind !== kind) continue;
    if (w.kind === 'channel') {
      const key = topicKey(w.channelId, w.topic);
      const policy = topicPolicies.value.get(key) ?? VISIBILITY.INHERIT;
      if (key === currentKey || policy === VISIBILITY.MUTED) continue;
      if (mutedChannels.has(w.channelId) && policy !== VISIBILITY.UNMUTED && policy !== VISIBILITY.FOLLOWED) continue;
      return go(channelNarrow(w.channelId, w.topic));
    }
    if (w.key === currentKey) continue;
    return go(dmNarrow(w.key.split(',').map(Number)));
  }
}

function escape(): boolean {
  if (helpOpen.value) helpOpen.value = false;
  else if (overlay.value) go(lastPlace.value);
  else if (sidebarOpen.value) sidebarOpen.value = false;
  else if (isSearch(narrow.value)) go(lastPlace.value);
  // Zulip's web_escape_navigates_to_home_view: on unless the user turned it off.
  else if (narrow.value.length > 0 && settings.value.web_escape_navigates_to_home_view !== false) go(COMBINED_FEED);
  else return false;
  return true;
}

function onKey(e: KeyboardEvent): void {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  // Open dialogs handle their own keys (Escape closes them natively).
  if (e.target instanceof Element && e.target.closest('dialog[open]')) return;
  if (document.querySelector('dialog[open]')) return;
  if (e.key === 'Escape') {
    if (!typing(e.target) && escape()) e.preventDefault();
    return;
  }
  if (typing(e.target)) return;
  // A focused button or link keeps Enter for itself.
  if (e.key === 'Enter' && e.target instanceof HTMLElement && e.target.closest('button, a, summary')) return;
  const s = selected();
  const mine = s?.m.sender_id === me.value?.user_id;
  const inOverlay = overlay.value !== null;
  const handled = (() => {
    switch (e.key) {
      case '?':
        helpOpen.value = true;
        return true;
      case '/':
        document.getElementById('search')?.focus();
        return true;
    }
    if (inOverlay) return false;
    switch (e.key) {
      case 'j':
      case 'ArrowDown':
        moveSelection(1);
        return true;
      case 'k':
      case 'ArrowUp':
        moveSelection(-1);
        return true;
      case 'c': {
        const channel = termOf(narrow.value, 'channel')?.operand;
        const topic = termOf(narrow.value, 'topic')?.operand;
        if (typeof channel === 'number')
          requestCompose({ kind: 'topic', channelId: channel, topic: topic === undefined ? '' : String(topic) });
        else requestCompose({ kind: 'current' });
        return true;
      }
      case 'x':
        requestCompose({ kind: 'new-dm' });
        return true;
      case 'r':
      case 'Enter':
        reply();
        return true;
      case 'e':
        if (s && mine) actingOn.value = { id: s.m.id, edit: true };
        return Boolean(s && mine);
      case '*':
        if (s) {
          void ok(
            api.POST('/messages/flags', { body: { messages: [s.m.id], op: s.flags.has('starred') ? 'remove' : 'add', flag: 'starred' } }),
          );
        }
        return Boolean(s);
      case '+':
      case '=':
        if (s) {
          const had = s.m.reactions.some((r) => r.user_id === me.value?.user_id && r.emoji_code === '1f44d');
          void toggleReaction(s.m.id, '+1', had).catch(() => undefined);
        }
        return Boolean(s);
      case 'n':
        nextUnread('channel');
        return true;
      case 'p':
        nextUnread('dm');
        return true;
    }
    return false;
  })();
  if (handled) e.preventDefault();
}

export function startShortcuts(): void {
  document.addEventListener('keydown', onKey);
}
