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
  /** Per channel, its topics with unread messages by lowercased name. */
  topics: ReadonlyMap<number, ReadonlyMap<string, { topic: string; count: number }>>;
  /** a DM conversation's key (dmKey) */
  dms: ReadonlyMap<string, number>;
  mentions: number;
}

/**
 * The counts are kept as messages arrive and are read, not recounted: a
 * user may have 50,000 unread messages and a flag event every few hundred
 * milliseconds while scrolling. The maps are live (changed in place); the
 * signal gets a new object on every change, which is what redraws.
 */
const channelCounts = new Map<number, number>();
const topicCounts = new Map<number, Map<string, { topic: string; count: number }>>();
const dmCounts = new Map<string, number>();
let total = 0;
let mentions = 0;
let mutedChannels: ReadonlySet<number> = new Set();

export const unread = signal<UnreadCounts>({ total: 0, channels: channelCounts, topics: topicCounts, dms: dmCounts, mentions: 0 });

function publish(): void {
  unread.value = { total, channels: channelCounts, topics: topicCounts, dms: dmCounts, mentions };
}

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
function counted(channelId: number, topic: string): boolean {
  const policy = topicPolicies.peek().get(topicKey(channelId, topic)) ?? VISIBILITY.INHERIT;
  if (policy === VISIBILITY.MUTED) return false;
  if (mutedChannels.has(channelId)) return policy === VISIBILITY.UNMUTED || policy === VISIBILITY.FOLLOWED;
  return true;
}

function bump<K>(map: Map<K, number>, key: K, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}

/** One unread message counted in (+1) or out (-1) of its conversation's counts. */
function tally(w: Where, by: 1 | -1): void {
  if (w.kind === 'dm') {
    bump(dmCounts, w.key, by);
    total += by;
    return;
  }
  let byTopic = topicCounts.get(w.channelId);
  if (!byTopic) topicCounts.set(w.channelId, (byTopic = new Map()));
  const k = w.topic.toLowerCase();
  const t = byTopic.get(k);
  const n = (t?.count ?? 0) + by;
  if (n > 0) byTopic.set(k, { topic: t?.topic ?? w.topic, count: n });
  else byTopic.delete(k);
  if (byTopic.size === 0) topicCounts.delete(w.channelId);
  if (!counted(w.channelId, w.topic)) return;
  bump(channelCounts, w.channelId, by);
  total += by;
}

function setWhere(id: number, w: Where): void {
  const old = whereOf.get(id);
  if (old) tally(old, -1);
  whereOf.set(id, w);
  tally(w, 1);
}

function forget(id: number): boolean {
  const old = whereOf.get(id);
  if (!old) return false;
  tally(old, -1);
  whereOf.delete(id);
  if (mentioned.delete(id)) mentions -= 1;
  return true;
}

/** Everything counted again: after a muting change, which changes what counts. */
function recount(): void {
  channelCounts.clear();
  topicCounts.clear();
  dmCounts.clear();
  total = 0;
  for (const w of whereOf.values()) tally(w, 1);
  mentions = 0;
  for (const id of mentioned) if (whereOf.has(id)) mentions += 1;
  publish();
}

// Muting or unmuting a topic or channel changes what counts.
effect(() => {
  void topicPolicies.value;
  mutedChannels = new Set(subscriptions.value.filter((s) => s.is_muted).map((s) => s.stream_id));
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
  for (const id of state.mentions) if (whereOf.has(id)) mentioned.add(id);
  recount();
}

export function messageDmKey(m: Message, myId: number): string {
  const ids = Array.isArray(m.display_recipient) ? m.display_recipient.map((r) => r.id) : [];
  return dmKey(ids, myId);
}

export function addUnread(m: Message, flags: readonly string[], myId: number): void {
  if (flags.includes('read')) return;
  if (m.type === 'stream' && m.stream_id !== undefined) setWhere(m.id, { kind: 'channel', channelId: m.stream_id, topic: m.subject });
  else setWhere(m.id, { kind: 'dm', key: messageDmKey(m, myId) });
  if (
    flags.some(
      (f) => f === 'mentioned' || f === 'wildcard_mentioned' || f === 'stream_wildcard_mentioned' || f === 'topic_wildcard_mentioned',
    ) &&
    !mentioned.has(m.id)
  ) {
    mentioned.add(m.id);
    mentions += 1;
  }
  publish();
}

export function removeUnread(ids: readonly number[]): void {
  let changed = false;
  for (const id of ids) changed = forget(id) || changed;
  if (changed) publish();
}

/** Messages moved to another channel or topic keep their unread state there. */
export function moveUnread(ids: readonly number[], channelId: number | undefined, topic: string | undefined): void {
  let changed = false;
  for (const id of ids) {
    const w = whereOf.get(id);
    if (w?.kind !== 'channel') continue;
    setWhere(id, { kind: 'channel', channelId: channelId ?? w.channelId, topic: topic ?? w.topic });
    changed = true;
  }
  if (changed) publish();
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
