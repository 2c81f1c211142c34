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

/** Zulip shows a channel's few most recent topics, and every one with unread messages. */
const RECENT_TOPICS = 8;

function topicsOf(channelId: number, counts: UnreadCounts): { topic: string; count: number }[] {
  const out = new Map<string, { topic: string; count: number }>();
  for (const t of (channelTopics.value.get(channelId) ?? []).slice(0, RECENT_TOPICS)) {
    out.set(t.name.toLowerCase(), { topic: t.name, count: counts.topics.get(topicKey(channelId, t.name))?.count ?? 0 });
  }
  for (const [k, t] of counts.topics) {
    if (k.startsWith(`${channelId}:`) && !out.has(t.topic.toLowerCase())) out.set(t.topic.toLowerCase(), t);
  }
  return [...out.values()].filter((t) => topicPolicies.value.get(topicKey(channelId, t.topic)) !== VISIBILITY.MUTED);
}

function ChannelTopics({ channelId, counts }: { channelId: number; counts: UnreadCounts }) {
  useEffect(() => {
    loadTopics(channelId).catch(() => undefined);
  }, [channelId]);
  const topics = topicsOf(channelId, counts);
  if (topics.length === 0) return null;
  return (
    <ul class="topics">
      {topics.map((t) => (
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
              {open && <ChannelTopics channelId={s.stream_id} counts={counts} />}
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
