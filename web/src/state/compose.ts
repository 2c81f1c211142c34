import { signal } from '@preact/signals';
import { termOf, type Narrow } from '../lib/narrow';
import { typingKey } from './events';
import { channelName, me, type Message } from './store';
import { dmKey } from './unread';

/**
 * Where the compose box writes to and what it holds. The draft of each
 * conversation is kept (in memory) when the user moves to another and comes
 * back, as Zulip keeps drafts. Other parts of the page address the box
 * through here: `replyTo(message)` for a reply, `startDirectMessage()` for
 * the "New direct message" control.
 */
export type Target = { kind: 'channel'; channel: string; topic: string } | { kind: 'dm'; to: number[] };

export const target = signal<Target>({ kind: 'channel', channel: '', topic: '' });
export const content = signal('');
/** Bumped to ask the compose box to focus its message field. */
export const focusRequest = signal(0);
/** Bumped to ask the compose box to focus its recipient field (a new direct message). */
export const recipientFocusRequest = signal(0);

const drafts = new Map<string, string>();

/** A conversation's key for its draft: the channel and topic (case-insensitive), or the people of a direct one. */
export function draftKey(t: Target): string {
  if (t.kind === 'dm') return t.to.length ? `d:${dmKey(t.to, me.value?.user_id ?? 0)}` : 'd:';
  return `s:${t.channel.toLowerCase()}\n${t.topic.toLowerCase()}`;
}

/**
 * Writes to another conversation: the current draft is put aside and the
 * new one's draft brought back. With `keepText` (the user editing the
 * recipients, channel or topic fields) the text stays as it is.
 */
export function setTarget(next: Target, keepText = false): void {
  if (keepText || draftKey(target.value) === draftKey(next)) {
    target.value = next;
    return;
  }
  saveDraft();
  target.value = next;
  content.value = drafts.get(draftKey(next)) ?? '';
}

/** Keeps the text typed so far as the current conversation's draft (nothing kept for an empty one). */
export function saveDraft(): void {
  const key = draftKey(target.value);
  if (content.value.trim()) drafts.set(key, content.value);
  else drafts.delete(key);
}

/** After sending: the conversation's draft is gone. */
export function clearDraft(): void {
  drafts.delete(draftKey(target.value));
  content.value = '';
}

/** The conversation a narrow is, if it is one a message can go to; null for the feed, searches, … */
export function targetOfNarrow(n: Narrow): Target | null {
  const dm = termOf(n, 'dm');
  if (dm && Array.isArray(dm.operand)) return { kind: 'dm', to: dm.operand };
  const channel = termOf(n, 'channel');
  if (channel && typeof channel.operand === 'number') {
    const topic = termOf(n, 'topic');
    return { kind: 'channel', channel: channelName(channel.operand), topic: topic ? String(topic.operand) : '' };
  }
  return null;
}

/** Replying to a message: its conversation becomes the target (the others of a direct one), and the message field takes focus. */
export function replyTo(m: Message): void {
  if (m.type === 'stream' && m.stream_id !== undefined) {
    setTarget({ kind: 'channel', channel: channelName(m.stream_id), topic: m.subject });
  } else {
    const myId = me.value?.user_id ?? 0;
    const ids = Array.isArray(m.display_recipient) ? m.display_recipient.map((r) => r.id) : [];
    setTarget({ kind: 'dm', to: dmKey(ids, myId).split(',').map(Number) });
  }
  focusRequest.value += 1;
}

/** A new direct message: recipients to be chosen, starting with `to` if given. */
export function startDirectMessage(to: number[] = []): void {
  setTarget({ kind: 'dm', to });
  if (to.length) focusRequest.value += 1;
  else recipientFocusRequest.value += 1;
}

/** The key under which the `typing` signal (state/events.ts) files those typing in a target's conversation. */
export function typingKeyOf(t: Target, channelId: number | undefined): string | null {
  if (t.kind === 'dm') return t.to.length ? typingKey(undefined, undefined, dmKey(t.to, me.value?.user_id ?? 0)) : null;
  return channelId !== undefined ? typingKey(channelId, t.topic, undefined) : null;
}
