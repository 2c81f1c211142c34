import { useEffect, useRef, useState } from 'preact/hooks';
import { dayOf } from '../lib/time';
import { useVirtualizer } from '../lib/virtual';
import { markSeen } from '../state/read';
import { loadMore, openAtNewest, view } from '../state/messages';
import { type Message } from '../state/store';
import { actingOn, listControl, selectedId, userCard } from '../state/ui';
import { MessageActions } from './MessageActions';
import { MessageItem } from './MessageItem';

/**
 * The same props for an unchanged row on every draw (no new set, element or
 * function), so that MessageItem's memo skips it: while scrolling, the list
 * redraws at each row measured, and only new rows should render.
 */
const NO_FLAGS: ReadonlySet<string> = new Set();
const openActions = (m: Message) => (actingOn.value = { id: m.id, edit: false });

/** Messages of one sender closer than this in time share one sender line, as in Zulip. */
const SAME_RUN_SECONDS = 5 * 60;

function conversationOf(m: Message): string {
  return m.type === 'stream' ? `s${m.stream_id}:${m.subject.toLowerCase()}` : `d${m.recipient_id}`;
}

/**
 * The open narrow's messages, virtualised: only what is near the viewport
 * is drawn. It opens at the first unread message (or the newest), fetches
 * more history as either end comes near, and marks as read what has been
 * on screen while the page had focus. One message is selected (clicked, or
 * moved to with the keyboard), the one shortcuts act on.
 */
export function MessageList() {
  const v = view.value;
  const scroller = useRef<HTMLDivElement>(null);
  const [farFromBottom, setFarFromBottom] = useState(false);
  const messages = v?.messages ?? [];
  const virtualizer = useVirtualizer({
    count: messages.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 64,
    overscan: 8,
    getItemKey: (i) => messages[i]?.id ?? i,
  });
  const positioned = useRef<string | null>(null);
  const firstId = useRef<number | null>(null);

  listControl.scrollTo = (id) => {
    const at = messages.findIndex((m) => m.id === id);
    if (at >= 0) virtualizer.scrollToIndex(at, { align: 'auto' });
  };
  listControl.toBottom = () => {
    if (v && !v.foundNewest) {
      // The window does not reach the newest: it is replaced by the newest, then drawn from the bottom.
      positioned.current = null;
      void openAtNewest();
    } else if (messages.length) virtualizer.scrollToIndex(messages.length - 1, { align: 'end' });
  };

  // On opening a narrow: to its first unread message (selected), or to the newest.
  useEffect(() => {
    if (!v || v.loading === 'initial' || positioned.current === v.key || messages.length === 0) return;
    positioned.current = v.key;
    firstId.current = messages[0].id;
    const at = v.anchorId !== null ? messages.findIndex((m) => m.id === v.anchorId) : messages.length - 1;
    selectedId.value = messages[Math.max(0, at)].id;
    virtualizer.scrollToIndex(Math.max(0, at), { align: v.anchorId !== null ? 'start' : 'end' });
  });

  // Older messages put above the fold keep the reader's place.
  useEffect(() => {
    if (!v || messages.length === 0 || firstId.current === null) return;
    if (messages[0].id !== firstId.current) {
      const kept = messages.findIndex((m) => m.id === firstId.current);
      firstId.current = messages[0].id;
      // Where the reader is stays put: the list moves down by what was put above it. (The list may have
      // been scrolled to its first unread since the older page was asked for, so not to the old top.)
      const el = scroller.current;
      const above = kept > 0 ? virtualizer.getOffsetForIndex(kept, 'start')?.[0] : undefined;
      if (el && above !== undefined) virtualizer.scrollToOffset(el.scrollTop + above);
    }
  });

  const items = virtualizer.getVirtualItems();
  /** Whether this render's rows cover what is in view: not when the list was scrolled in this commit (on opening, a jump). */
  const inView = (el: HTMLElement) =>
    items.length > 0 &&
    items[0].start <= el.scrollTop + 1 &&
    items[items.length - 1].end >= Math.min(el.scrollTop + el.clientHeight, virtualizer.getTotalSize()) - 1;
  useEffect(() => {
    const el = scroller.current;
    // Not before the rows drawn are the ones in view: the first draw is at the top (and right after
    // the jump to the first unread the rows are still those), which is no reason to fetch history
    // or to take messages for seen.
    if (!v || !el || positioned.current !== v.key || !inView(el)) return;
    // Near an end by the rows drawn and by where the list really is.
    const margin = 5 * 64;
    if (items[0].index < 5 && el.scrollTop < margin) void loadMore('older');
    if (items[items.length - 1].index > messages.length - 5 && el.scrollHeight - el.scrollTop - el.clientHeight < margin) {
      void loadMore('newer');
    }
    const top = el.scrollTop;
    const bottom = top + el.clientHeight;
    const seen: number[] = [];
    for (const it of items) {
      if (it.end <= bottom + 1 && it.start >= top - 1) {
        const m = messages[it.index];
        if (m && !v.flags.get(m.id)?.has('read')) seen.push(m.id);
      }
    }
    markSeen(seen);
  });
  // For bench/web-client.ts: the narrow's first 100 messages (or all it has) are in and the rows in view drawn.
  const drawn = useRef<string | null>(null);
  useEffect(() => {
    const el = scroller.current;
    if (!v || !el || drawn.current === v.key || v.loading !== null || v.error) return;
    if (messages.length > 0 && (positioned.current !== v.key || !inView(el))) return;
    if (messages.length > 0 && messages.length < 100 && !(v.foundOldest && v.foundNewest)) return;
    drawn.current = v.key;
    performance.mark('parley:list-drawn', { detail: { narrow: v.key, messages: messages.length } });
  });

  if (!v) return <div class="message-list" />;
  const acting = actingOn.value ? messages.find((m) => m.id === actingOn.value?.id) : undefined;
  return (
    <div class="message-area">
      <div
        class="message-list"
        ref={scroller}
        tabIndex={0}
        aria-label="Messages"
        aria-busy={v.loading !== null}
        onScroll={(e) => {
          const el = e.currentTarget;
          setFarFromBottom(el.scrollHeight - el.scrollTop - el.clientHeight > el.clientHeight);
        }}
        onClick={(e) => {
          const target = e.target as HTMLElement;
          const person = target.closest<HTMLElement>('[data-user-id]');
          if (person) {
            userCard.value = Number(person.dataset.userId);
            return;
          }
          const article = target.closest<HTMLElement>('[data-message-id]');
          if (article) selectedId.value = Number(article.dataset.messageId);
        }}
      >
        {v.loading === 'initial' && <p class="status">Loading…</p>}
        {v.error && <p class="status error">{v.error}</p>}
        {v.loading === null && messages.length === 0 && !v.error && <p class="status">No messages here yet.</p>}
        {/* ARIA's feed must hold articles: an empty narrow's list is not one yet. */}
        <div class="rows" role={messages.length ? 'feed' : undefined} style={{ height: `${virtualizer.getTotalSize()}px` }}>
          {items.map((it) => {
            const m = messages[it.index];
            const prev = messages[it.index - 1];
            // A new day starts a new recipient line too, which carries the date.
            const newConversation = !prev || conversationOf(prev) !== conversationOf(m) || dayOf(prev.timestamp) !== dayOf(m.timestamp);
            const showSender = newConversation || prev.sender_id !== m.sender_id || m.timestamp - prev.timestamp > SAME_RUN_SECONDS;
            return (
              <div
                key={it.key}
                data-index={it.index}
                ref={(el) => {
                  if (el) virtualizer.measureElement(el);
                }}
                class="row"
                style={{ transform: `translateY(${it.start}px)` }}
              >
                <MessageItem
                  message={m}
                  flags={v.flags.get(m.id) ?? NO_FLAGS}
                  showSender={showSender}
                  recipientLine={newConversation}
                  selected={selectedId.value === m.id}
                  onActions={openActions}
                />
              </div>
            );
          })}
        </div>
        {v.foundNewest && v.loading === null && messages.length > 0 && <p class="status end">You are up to date.</p>}
      </div>
      {(farFromBottom || (v.foundNewest === false && v.loading === null && messages.length > 0)) && (
        <button type="button" class="jump-bottom" onClick={() => listControl.toBottom()}>
          ↓ Jump to bottom
        </button>
      )}
      {acting && (
        <MessageActions
          key={acting.id}
          message={acting}
          flags={v.flags.get(acting.id) ?? new Set()}
          startEditing={actingOn.value?.edit ?? false}
          onClose={() => (actingOn.value = null)}
        />
      )}
    </div>
  );
}
