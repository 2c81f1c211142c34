import { effect, signal } from '@preact/signals';
import { subscriptions, topicKey, topicPolicies, VISIBILITY, type Message, type Register } from './store';

/**
 * Unread messages, as counts per channel, topic and direct conversation.
 * Filled from POST /register's unread_msgs, then kept by message and flag
 * events; each id remembers its conversation, so marking read needs only ids.
 */
export type Where = { kind: 'channel'; channelId: number; topic: string } | { kind: 'dm'; key: string };

const whereOf = new Map<number, Where>();
const mentioned = new Set<number>();

export interface UnreadCounts {
  total: number;
  channels: ReadonlyMap<number, number>;
  /** `${channelId}:${topic lowercased}` */
  topics: ReadonlyMap<string, { topic: string; count: number }>;
  /** a DM conversation's key (dmKey) */
  dms: ReadonlyMap<string, number>;
  mentions: number;
}

export const unread = signal<UnreadCounts>({ total: 0, channels: new Map(), topics: new Map(), dms: new Map(), mentions: 0 });

/** A direct conversation's key: the other participants' ids, sorted, or the caller's own for notes to self. */
export function dmKey(userIds: number[], myId: number): string {
  const others = userIds.filter((id) => id !== myId);
  return (others.length ? others : [myId]).sort((a, b) => a - b).join(',');
}

/**
 * Whether a topic's unread messages count, as in Zulip: not in a muted topic,
 * and in a muted channel only in topics unmuted or followed. Mentions count
 * wherever they are.
 */
function counted(channelId: number, topic: string, mutedChannels: ReadonlySet<number>): boolean {
  const policy = topicPolicies.value.get(topicKey(channelId, topic)) ?? VISIBILITY.INHERIT;
  if (policy === VISIBILITY.MUTED) return false;
  if (mutedChannels.has(channelId)) return policy === VISIBILITY.UNMUTED || policy === VISIBILITY.FOLLOWED;
  return true;
}

function recount(): void {
  const channels = new Map<number, number>();
  const topics = new Map<string, { topic: string; count: number }>();
  const dms = new Map<string, number>();
  const mutedChannels = new Set(subscriptions.value.filter((s) => s.is_muted).map((s) => s.stream_id));
  let total = 0;
  for (const w of whereOf.values()) {
    if (w.kind === 'channel') {
      const k = `${w.channelId}:${w.topic.toLowerCase()}`;
      const t = topics.get(k);
      topics.set(k, { topic: t?.topic ?? w.topic, count: (t?.count ?? 0) + 1 });
      if (!counted(w.channelId, w.topic, mutedChannels)) continue;
      channels.set(w.channelId, (channels.get(w.channelId) ?? 0) + 1);
    } else {
      dms.set(w.key, (dms.get(w.key) ?? 0) + 1);
    }
    total += 1;
  }
  let mentions = 0;
  for (const id of mentioned) if (whereOf.has(id)) mentions += 1;
  unread.value = { total, channels, topics, dms, mentions };
}

// Muting or unmuting a topic or channel changes what counts.
effect(() => {
  void topicPolicies.value;
  void subscriptions.value;
  recount();
});

export function loadUnread(state: NonNullable<Register['unread_msgs']>, myId: number): void {
  whereOf.clear();
  mentioned.clear();
  for (const s of state.streams) {
    for (const id of s.unread_message_ids) whereOf.set(id, { kind: 'channel', channelId: s.stream_id, topic: s.topic });
  }
  for (const p of state.pms) {
    const key = dmKey([p.other_user_id], myId);
    for (const id of p.unread_message_ids) whereOf.set(id, { kind: 'dm', key });
  }
  for (const h of state.huddles) {
    const key = dmKey(h.user_ids_string.split(',').map(Number), myId);
    for (const id of h.unread_message_ids) whereOf.set(id, { kind: 'dm', key });
  }
  for (const id of state.mentions) mentioned.add(id);
  recount();
}

export function messageDmKey(m: Message, myId: number): string {
  const ids = Array.isArray(m.display_recipient) ? m.display_recipient.map((r) => r.id) : [];
  return dmKey(ids, myId);
}

export function addUnread(m: Message, flags: readonly string[], myId: number): void {
  if (flags.includes('read')) return;
  if (m.type === 'stream' && m.stream_id !== undefined) whereOf.set(m.id, { kind: 'channel', channelId: m.stream_id, topic: m.subject });
  else whereOf.set(m.id, { kind: 'dm', key: messageDmKey(m, myId) });
  if (
    flags.some(
      (f) => f === 'mentioned' || f === 'wildcard_mentioned' || f === 'stream_wildcard_mentioned' || f === 'topic_wildcard_mentioned',
    )
  ) {
    mentioned.add(m.id);
  }
  recount();
}

export function removeUnread(ids: readonly number[]): void {
  let changed = false;
  for (const id of ids) changed = whereOf.delete(id) || changed;
  if (changed) recount();
}

/** Messages moved to another channel or topic keep their unread state there. */
export function moveUnread(ids: readonly number[], channelId: number | undefined, topic: string | undefined): void {
  let changed = false;
  for (const id of ids) {
    const w = whereOf.get(id);
    if (w?.kind !== 'channel') continue;
    whereOf.set(id, { kind: 'channel', channelId: channelId ?? w.channelId, topic: topic ?? w.topic });
    changed = true;
  }
  if (changed) recount();
}

/** The conversation of an unread message (for jumping to the next unread topic or conversation). */
export function unreadWhere(): ReadonlyMap<number, Where> {
  return whereOf;
}

export function isUnread(id: number): boolean {
  return whereOf.has(id);
}

/** The unread ids of a channel (every topic when topic is undefined). */
export function unreadIdsIn(channelId: number, topic?: string): number[] {
  const out: number[] = [];
  for (const [id, w] of whereOf) {
    if (w.kind === 'channel' && w.channelId === channelId && (topic === undefined || w.topic.toLowerCase() === topic.toLowerCase()))
      out.push(id);
  }
  return out;
}
