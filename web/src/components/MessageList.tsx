import { useEffect, useRef, useState } from 'preact/hooks';
import { channelNarrow, dmNarrow } from '../lib/narrow';
import { dateOf } from '../lib/time';
import { useVirtualizer } from '../lib/virtual';
import { markSeen } from '../state/read';
import { loadMore, view } from '../state/messages';
import { hashOf } from '../state/navigation';
import { channelName, me, userName, type Message } from '../state/store';
import { MessageActions } from './MessageActions';
import { MessageItem } from './MessageItem';

/** Messages of one sender closer than this in time share one sender line, as in Zulip. */
const SAME_RUN_SECONDS = 5 * 60;

function conversationOf(m: Message): string {
  return m.type === 'stream' ? `s${m.stream_id}:${m.subject.toLowerCase()}` : `d${m.recipient_id}`;
}

function RecipientLine({ m }: { m: Message }) {
  const myId = me.value?.user_id ?? 0;
  if (m.type === 'stream' && m.stream_id !== undefined) {
    return (
      <header class="recipient">
        <a href={hashOf(channelNarrow(m.stream_id))}>#{channelName(m.stream_id)}</a>
        <span aria-hidden="true"> › </span>
        <a href={hashOf(channelNarrow(m.stream_id, m.subject))}>{m.subject || 'general chat'}</a>
        <span class="date">{dateOf(m.timestamp)}</span>
      </header>
    );
  }
  const ids = Array.isArray(m.display_recipient) ? m.display_recipient.map((r) => r.id) : [];
  const others = ids.filter((id) => id !== myId);
  return (
    <header class="recipient dm">
      <a href={hashOf(dmNarrow(others.length ? others : [myId]))}>
        {others.length ? `You and ${others.map(userName).join(', ')}` : 'You (notes to self)'}
      </a>
      <span class="date">{dateOf(m.timestamp)}</span>
    </header>
  );
}

/**
 * The open narrow's messages, virtualised: only what is near the viewport
 * is drawn. It opens at the first unread message (or the newest), fetches
 * more history as either end comes near, and marks as read what has been
 * on screen while the page had focus.
 */
export function MessageList() {
  const v = view.value;
  const scroller = useRef<HTMLDivElement>(null);
  const [acting, setActing] = useState<{ m: Message; anchor: HTMLElement } | null>(null);
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

  // On opening a narrow: to its first unread message, or to the newest.
  useEffect(() => {
    if (!v || v.loading === 'initial' || positioned.current === v.key || messages.length === 0) return;
    positioned.current = v.key;
    firstId.current = messages[0].id;
    const at = v.anchorId !== null ? messages.findIndex((m) => m.id === v.anchorId) : messages.length - 1;
    virtualizer.scrollToIndex(Math.max(0, at), { align: v.anchorId !== null ? 'start' : 'end' });
  });

  // Older messages put above the fold keep the reader's place.
  useEffect(() => {
    if (!v || messages.length === 0 || firstId.current === null) return;
    if (messages[0].id !== firstId.current) {
      const kept = messages.findIndex((m) => m.id === firstId.current);
      firstId.current = messages[0].id;
      if (kept > 0) virtualizer.scrollToIndex(kept, { align: 'start' });
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
    // Not before the rows drawn are the ones in view: the first draw is at the top, which is no reason to fetch.
    if (!v || !el || positioned.current !== v.key || !inView(el)) return;
    if (items[0].index < 5) void loadMore('older');
    if (items[items.length - 1].index > messages.length - 5) void loadMore('newer');
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
  return (
    <div class="message-list" ref={scroller} tabIndex={0} aria-label="Messages" aria-busy={v.loading !== null}>
      {v.loading === 'initial' && <p class="status">Loading…</p>}
      {v.error && <p class="status error">{v.error}</p>}
      {v.loading === null && messages.length === 0 && !v.error && <p class="status">No messages here yet.</p>}
      <div class="rows" role="feed" style={{ height: `${virtualizer.getTotalSize()}px` }}>
        {items.map((it) => {
          const m = messages[it.index];
          const prev = messages[it.index - 1];
          const newConversation = !prev || conversationOf(prev) !== conversationOf(m);
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
                flags={v.flags.get(m.id) ?? new Set()}
                showSender={showSender}
                recipientLine={newConversation ? <RecipientLine m={m} /> : null}
                onActions={(msg, anchor) => setActing({ m: msg, anchor })}
              />
            </div>
          );
        })}
      </div>
      {v.foundNewest && v.loading === null && messages.length > 0 && <p class="status end">You are up to date.</p>}
      {acting && <MessageActions message={acting.m} flags={v.flags.get(acting.m.id) ?? new Set()} onClose={() => setActing(null)} />}
    </div>
  );
}
