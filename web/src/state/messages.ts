import { signal } from '@preact/signals';
import { api, ok } from '../api/client';
import { narrowKey, type Narrow } from '../lib/narrow';
import { me, type Message } from './store';
import { dmKey, messageDmKey } from './unread';

/**
 * The message list of a narrow: a window of its history, fetched around an
 * anchor (the first unread on opening) and extended at either end as the
 * user scrolls (GET /messages with anchors). Windows of recently seen
 * narrows are kept, so going back to one draws at once and only catches up.
 */
export interface MessageView {
  narrow: Narrow;
  key: string;
  messages: Message[];
  /** Each message's flags (read, starred, mentioned, …) */
  flags: Map<number, Set<string>>;
  foundOldest: boolean;
  foundNewest: boolean;
  /** The message the list first scrolls to (the first unread); null for the bottom. */
  anchorId: number | null;
  loading: 'initial' | 'older' | 'newer' | null;
  error: string | null;
}

const PAGE = 100;
const KEPT_VIEWS = 12;
const views = new Map<string, MessageView>();

export const view = signal<MessageView | null>(null);

function emptyView(narrow: Narrow): MessageView {
  return {
    narrow,
    key: narrowKey(narrow),
    messages: [],
    flags: new Map(),
    foundOldest: false,
    foundNewest: false,
    anchorId: null,
    loading: 'initial',
    error: null,
  };
}

function publish(v: MessageView): void {
  // A new object, so that components reading the signal redraw.
  const copy = { ...v };
  views.set(v.key, copy);
  if (view.value?.key === v.key) view.value = copy;
}

async function fetchMessages(narrow: Narrow, anchor: string | number, before: number, after: number) {
  return ok(
    api.GET('/messages', {
      params: {
        query: {
          anchor: String(anchor),
          num_before: before,
          num_after: after,
          narrow: JSON.stringify(narrow),
          apply_markdown: true,
          // Gravatar pictures are drawn as initials (the CSP forbids outside images): their URLs are not needed.
          client_gravatar: true,
        },
      },
    }),
  );
}

export async function openNarrow(narrow: Narrow): Promise<void> {
  const key = narrowKey(narrow);
  const kept = views.get(key);
  if (kept) {
    views.delete(key);
    views.set(key, kept);
    view.value = kept;
    return;
  }
  const v = emptyView(narrow);
  views.set(key, v);
  while (views.size > KEPT_VIEWS) views.delete(views.keys().next().value as string);
  view.value = v;
  try {
    // near:ID and id:ID open at that message, as in Zulip; anything else at the first unread. A
    // full page on each side: where most is read the first unread is the newest message, where
    // it is near the start of the history the page before it is short; either way the first
    // screen has 100 messages (when the narrow has them) without a second fetch.
    const at = narrow.find((t) => (t.operator === 'near' || t.operator === 'id') && !t.negated && typeof t.operand === 'number');
    const anchor = typeof at?.operand === 'number' ? at.operand : null;
    const page = await fetchMessages(narrow, anchor ?? 'first_unread', PAGE, PAGE);
    const current = views.get(key) ?? v;
    const flags = new Map(current.flags);
    for (const m of page.messages) flags.set(m.id, new Set(m.flags ?? []));
    const firstUnread =
      anchor !== null ? page.messages.find((m) => m.id >= anchor) : page.messages.find((m) => !(m.flags ?? []).includes('read'));
    publish({
      ...current,
      messages: merge(current.messages, page.messages),
      flags,
      foundOldest: page.found_oldest,
      foundNewest: page.found_newest,
      anchorId: firstUnread?.id ?? null,
      loading: null,
    });
  } catch (e) {
    publish({ ...v, loading: null, error: e instanceof Error ? e.message : String(e) });
  }
}

export async function loadMore(direction: 'older' | 'newer'): Promise<void> {
  const v = view.value;
  if (!v || v.loading || v.messages.length === 0) return;
  if (direction === 'older' ? v.foundOldest : v.foundNewest) return;
  publish({ ...v, loading: direction });
  try {
    const edge = direction === 'older' ? v.messages[0].id : v.messages[v.messages.length - 1].id;
    const page = await fetchMessages(v.narrow, edge, direction === 'older' ? PAGE : 0, direction === 'newer' ? PAGE : 0);
    const current = views.get(v.key) ?? v;
    const flags = new Map(current.flags);
    for (const m of page.messages) flags.set(m.id, new Set(m.flags ?? []));
    publish({
      ...current,
      messages: merge(current.messages, page.messages),
      flags,
      foundOldest: direction === 'older' ? page.found_oldest : current.foundOldest,
      foundNewest: direction === 'newer' ? page.found_newest : current.foundNewest,
      loading: null,
    });
  } catch (e) {
    publish({ ...(views.get(v.key) ?? v), loading: null, error: e instanceof Error ? e.message : String(e) });
  }
}

/** The newest messages of the open narrow, in place of a window that does not reach them (jump to bottom). */
export async function openAtNewest(): Promise<void> {
  const v = view.value;
  if (!v || v.foundNewest) return;
  publish({ ...v, loading: 'initial', anchorId: null });
  try {
    const page = await fetchMessages(v.narrow, 'newest', PAGE, 0);
    const flags = new Map<number, Set<string>>();
    for (const m of page.messages) flags.set(m.id, new Set(m.flags ?? []));
    publish({ ...v, messages: page.messages, flags, foundOldest: page.found_oldest, foundNewest: true, anchorId: null, loading: null });
  } catch (e) {
    publish({ ...v, loading: null, error: e instanceof Error ? e.message : String(e) });
  }
}

function merge(a: Message[], b: Message[]): Message[] {
  if (a.length === 0) return b;
  const byId = new Map<number, Message>();
  for (const m of a) byId.set(m.id, m);
  for (const m of b) byId.set(m.id, m);
  return [...byId.values()].sort((x, y) => x.id - y.id);
}

/** Whether a new message belongs in a narrow, for the narrows the client can decide alone. */
export function matchesNarrow(narrow: Narrow, m: Message, flags: readonly string[]): boolean | null {
  const myId = me.value?.user_id ?? 0;
  for (const t of narrow) {
    if (t.negated) return null;
    switch (t.operator) {
      case 'channel':
        if (m.type !== 'stream' || m.stream_id !== t.operand) return false;
        break;
      case 'topic':
        if (m.type !== 'stream' || m.subject.toLowerCase() !== String(t.operand).toLowerCase()) return false;
        break;
      case 'dm':
        if (m.type !== 'private' || !Array.isArray(t.operand) || messageDmKey(m, myId) !== dmKey(t.operand, myId)) return false;
        break;
      case 'is':
        if (t.operand === 'dm' || t.operand === 'private') {
          if (m.type !== 'private') return false;
        } else if (t.operand === 'starred') {
          if (!flags.includes('starred')) return false;
        } else if (t.operand === 'mentioned') {
          if (!flags.some((f) => f.endsWith('mentioned'))) return false;
        } else return null;
        break;
      default:
        return null;
    }
  }
  return true;
}

/** A new message: appended to every kept window it belongs to that reaches the newest message. */
export function onNewMessage(m: Message, flags: readonly string[]): void {
  for (const v of [...views.values()]) {
    if (!v.foundNewest || v.flags.has(m.id)) continue;
    if (matchesNarrow(v.narrow, m, flags) !== true) {
      // A narrow the client cannot judge (search, negations) is fetched again when next opened.
      if (matchesNarrow(v.narrow, m, flags) === null && view.value?.key !== v.key) views.delete(v.key);
      continue;
    }
    const fl = new Map(v.flags);
    fl.set(m.id, new Set(flags));
    publish({ ...v, messages: [...v.messages, m], flags: fl });
  }
}

/** Applies a change to one message wherever it is shown. */
export function updateMessages(ids: ReadonlySet<number>, change: (m: Message) => Message | null): void {
  for (const v of [...views.values()]) {
    if (!v.messages.some((m) => ids.has(m.id))) continue;
    const messages: Message[] = [];
    for (const m of v.messages) {
      if (!ids.has(m.id)) messages.push(m);
      else {
        const next = change(m);
        if (next) messages.push(next);
      }
    }
    publish({ ...v, messages });
  }
}

/**
 * After messages moved to another channel or topic: the open list drops
 * those that no longer belong to its narrow, and kept windows of other
 * narrows are forgotten, to be fetched again with what moved into them.
 */
export function afterMove(ids: ReadonlySet<number>): void {
  for (const v of [...views.values()]) {
    if (view.value?.key !== v.key) {
      views.delete(v.key);
      continue;
    }
    const messages = v.messages.filter((m) => !ids.has(m.id) || matchesNarrow(v.narrow, m, [...(v.flags.get(m.id) ?? [])]) !== false);
    if (messages.length !== v.messages.length) publish({ ...v, messages });
  }
}

export function updateFlags(ids: readonly number[], flag: string, op: 'add' | 'remove', all = false): void {
  const set = new Set(ids);
  for (const v of [...views.values()]) {
    if (!all && !ids.some((id) => v.flags.has(id))) continue;
    const flags = new Map(v.flags);
    for (const [id, f] of v.flags) {
      if (!all && !set.has(id)) continue;
      const next = new Set(f);
      if (op === 'add') next.add(flag);
      else next.delete(flag);
      flags.set(id, next);
    }
    publish({ ...v, flags });
  }
}

/** After a re-register (events lost), kept windows may be stale: dropped, and the current one fetched again. */
export function forgetViews(): Narrow | null {
  const current = view.value?.narrow ?? null;
  views.clear();
  return current;
}
