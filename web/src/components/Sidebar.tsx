import { useEffect, useState } from 'preact/hooks';
import { channelNarrow, dmNarrow, narrowKey, type Narrow } from '../lib/narrow';
import { hashOf, narrow } from '../state/navigation';
import { me, presence, subscriptions, topicKey, topicPolicies, userName, users, VISIBILITY } from '../state/store';
import { channelTopics, loadTopics } from '../state/topics';
import { topicMenu } from '../state/ui';
import { unread, type UnreadCounts } from '../state/unread';
import { PresenceDot } from './PresenceDot';

function Count({ n, label }: { n: number | undefined; label: string }) {
  if (!n) return null;
  return (
    <span class="count" aria-label={`${n} unread ${label}`}>
      {n}
    </span>
  );
}

function isCurrent(n: Narrow): boolean {
  return narrowKey(n) === narrowKey(narrow.value);
}

function Link({ to, children, class: cls }: { to: Narrow; children: preact.ComponentChildren; class?: string }) {
  return (
    <a href={hashOf(to)} class={`${cls ?? ''} ${isCurrent(to) ? 'current' : ''}`} aria-current={isCurrent(to) ? 'page' : undefined}>
      {children}
    </a>
  );
}

/**
 * Zulip's rule for a channel's topics in the sidebar: the 8 most recent,
 * then, up to 12 in all, more recent ones with unread messages, and always
 * the topic open now; the rest behind "More topics" with their unread count.
 * A busy channel has hundreds of unread topics: drawing them all made the
 * first screen slow and the list useless.
 */
const RECENT_TOPICS = 8;
const RECENT_TOPICS_WITH_UNREAD = 12;

interface SidebarTopics {
  shown: { topic: string; count: number }[];
  /** Unread messages in topics not shown, and whether there are such topics. */
  moreUnread: number;
  more: boolean;
}

function topicsOf(channelId: number, counts: UnreadCounts, currentTopic: string | undefined, all: boolean): SidebarTopics {
  const muted = (topic: string) => topicPolicies.value.get(topicKey(channelId, topic)) === VISIBILITY.MUTED;
  // This channel's unread topics, by lowercased name; the rest of its topics have none.
  const unreadTopics = counts.topics.get(channelId) ?? new Map<string, { topic: string; count: number }>();
  const current = currentTopic?.toLowerCase();
  const out: SidebarTopics = { shown: [], moreUnread: 0, more: false };
  const seen = new Set<string>();
  let unreadLeft = unreadTopics.size;
  const consider = (name: string): boolean => {
    const k = name.toLowerCase();
    if (seen.has(k)) return true;
    seen.add(k);
    const count = unreadTopics.get(k)?.count ?? 0;
    if (count > 0) unreadLeft -= 1;
    if (muted(name) && k !== current) return true;
    const n = out.shown.length;
    if (all || k === current || n < RECENT_TOPICS || (count > 0 && n < RECENT_TOPICS_WITH_UNREAD)) out.shown.push({ topic: name, count });
    else out.more = true;
    // A busy channel has thousands of topics: past the recent ones, stop once no unread or open topic can follow.
    return (
      all ||
      n < RECENT_TOPICS ||
      (unreadLeft > 0 && out.shown.length < RECENT_TOPICS_WITH_UNREAD) ||
      (current !== undefined && !seen.has(current))
    );
  };
  // Newest first: the channel's topics as the server listed them, then unread ones it has not listed yet.
  const listed = channelTopics.value.get(channelId) ?? [];
  let i = 0;
  while (i < listed.length && consider(listed[i]!.name)) i += 1;
  if (i < listed.length - 1) out.more = true;
  for (const t of unreadTopics.values()) if (!seen.has(t.topic.toLowerCase())) consider(t.topic);
  if (currentTopic !== undefined && !seen.has(current!)) consider(currentTopic);
  const shown = new Set(out.shown.map((t) => t.topic.toLowerCase()));
  for (const [k, t] of unreadTopics) if (!shown.has(k) && !muted(t.topic)) out.moreUnread += t.count;
  return out;
}

function ChannelTopics({ channelId, counts, currentTopic }: { channelId: number; counts: UnreadCounts; currentTopic: string | undefined }) {
  const [all, setAll] = useState(false);
  useEffect(() => {
    loadTopics(channelId).catch(() => undefined);
  }, [channelId]);
  const topics = topicsOf(channelId, counts, currentTopic, all);
  if (topics.shown.length === 0) return null;
  return (
    <ul class="topics">
      {topics.shown.map((t) => (
        <li key={t.topic.toLowerCase()} class="topic-row">
          <Link to={channelNarrow(channelId, t.topic)}>
            <span class="topic-name">{t.topic || 'general chat'}</span> <Count n={t.count} label="messages" />
          </Link>
          <button
            type="button"
            class="icon"
            aria-label={`Actions for topic ${t.topic || 'general chat'}`}
            aria-haspopup="dialog"
            onClick={() => (topicMenu.value = { channelId, topic: t.topic })}
          >
            ⋯
          </button>
        </li>
      ))}
      {(topics.more || all) && (
        <li class="more-topics">
          <button type="button" class="link" aria-expanded={all} onClick={() => setAll(!all)}>
            {all ? 'Fewer topics' : 'More topics'}
          </button>{' '}
          <Count n={topics.moreUnread} label="messages in more topics" />
        </li>
      )}
    </ul>
  );
}

/**
 * The left column: the views (combined feed, mentions, starred, direct
 * messages), the user's channels with their unread topics, and the direct
 * conversations with unread messages; each with its unread count.
 */
export function Sidebar() {
  const counts = unread.value;
  const myId = me.value?.user_id ?? 0;
  const [expanded, setExpanded] = useState<number | null>(null);
  const currentChannel = narrow.value.find((t) => t.operator === 'channel')?.operand;
  const topicTerm = narrow.value.find((t) => t.operator === 'topic')?.operand;
  const currentTopic = typeof topicTerm === 'string' ? topicTerm : undefined;
  const channels = [...subscriptions.value].sort((a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || a.name.localeCompare(b.name));
  return (
    <nav class="sidebar" id="sidebar" aria-label="Channels and conversations">
      <ul class="views">
        <li>
          <Link to={[]}>
            Combined feed <Count n={counts.total} label="messages" />
          </Link>
        </li>
        <li>
          <Link to={[{ operator: 'is', operand: 'mentioned' }]}>
            Mentions <Count n={counts.mentions} label="mentions" />
          </Link>
        </li>
        <li>
          <Link to={[{ operator: 'is', operand: 'starred' }]}>Starred messages</Link>
        </li>
        <li>
          <Link to={[{ operator: 'is', operand: 'dm' }]}>
            Direct messages <Count n={[...counts.dms.values()].reduce((a, b) => a + b, 0)} label="direct messages" />
          </Link>
        </li>
      </ul>
      <h2>Channels</h2>
      <ul class="channels">
        {channels.map((s) => {
          const open = expanded === s.stream_id || currentChannel === s.stream_id;
          return (
            <li key={s.stream_id} class={s.is_muted ? 'muted' : ''}>
              <span class="channel-row">
                <span class="swatch" style={{ color: s.color }} aria-hidden="true">
                  #
                </span>
                <Link to={channelNarrow(s.stream_id)}>
                  {s.name} <Count n={counts.channels.get(s.stream_id)} label="messages" />
                </Link>
                <button
                  type="button"
                  class="icon"
                  aria-expanded={open}
                  aria-label={`${open ? 'Hide' : 'Show'} topics of ${s.name}`}
                  onClick={() => setExpanded(open ? null : s.stream_id)}
                >
                  {open ? '▾' : '▸'}
                </button>
              </span>
              {open && (
                <ChannelTopics
                  channelId={s.stream_id}
                  counts={counts}
                  currentTopic={currentChannel === s.stream_id ? currentTopic : undefined}
                />
              )}
            </li>
          );
        })}
      </ul>
      <h2>Direct messages</h2>
      <ul class="dms">
        {[...counts.dms.entries()].map(([key, n]) => {
          const ids = key.split(',').map(Number);
          const other = ids.length === 1 ? ids[0] : null;
          return (
            <li key={key}>
              <Link to={dmNarrow(ids)}>
                {other !== null && <PresenceDot userId={other} />}
                {ids.map((id) => (id === myId ? 'You' : userName(id))).join(', ')} <Count n={n} label="messages" />
              </Link>
            </li>
          );
        })}
        {[...users.value.values()]
          .filter((u) => u.is_active !== false && !u.is_bot && u.user_id !== myId && !counts.dms.has(String(u.user_id)))
          .sort((a, b) => (presence.value.get(b.user_id)?.active ?? 0) - (presence.value.get(a.user_id)?.active ?? 0))
          .slice(0, 20)
          .map((u) => (
            <li key={u.user_id}>
              <Link to={dmNarrow([u.user_id])}>
                <PresenceDot userId={u.user_id} />
                {u.full_name}
              </Link>
            </li>
          ))}
      </ul>
    </nav>
  );
}
