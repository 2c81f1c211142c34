import { computed, signal } from '@preact/signals';
import { api, ok, type Schemas } from '../api/client';
import type { Narrow } from '../lib/narrow';
import { view } from './messages';
import { replaceIn } from './store';

/**
 * What the user does to a topic as a whole: its visibility (mute, unmute,
 * follow), marking it read, resolving it and moving it. The channel's recent
 * topics (GET /users/me/{stream_id}/topics) are kept per channel for the
 * sidebar and to know a topic's newest message.
 */
export type TopicSummary = Schemas['TopicSummary'];

/** Zulip marks a resolved topic by this prefix on its name (a check mark and a space). */
export const RESOLVED_PREFIX = '✔ ';

export const channelTopics = signal<ReadonlyMap<number, readonly TopicSummary[]>>(new Map());

/** The topics' names alone, newest first, for the compose box's suggestions. */
export const topicsByChannel = computed<ReadonlyMap<number, readonly string[]>>(
  () => new Map([...channelTopics.value].map(([id, topics]) => [id, topics.map((t) => t.name)])),
);

/** The channel's recent topics, fetched again when asked for after a minute (new topics appear all the time). */
export async function loadTopics(channelId: number, maxAgeMs = 0): Promise<readonly string[]> {
  const at = fetchedAt.get(channelId);
  if (at !== undefined && Date.now() - at < maxAgeMs) return topicsByChannel.value.get(channelId) ?? [];
  fetchedAt.set(channelId, Date.now());
  try {
    const r = await ok(
      api.GET('/users/me/{stream_id}/topics', { params: { path: { stream_id: channelId }, query: { allow_empty_topic_name: true } } }),
    );
    channelTopics.value = replaceIn(channelTopics.value, channelId, r.topics);
    return r.topics.map((t) => t.name);
  } catch (e) {
    fetchedAt.delete(channelId);
    throw e;
  }
}

const fetchedAt = new Map<number, number>();
/** How long the compose box's suggestions rely on a fetched list. */
export const COMPOSE_TOPICS_MAX_AGE_MS = 60_000;

/** A new message keeps its channel's topic list current without another request. */
export function noteTopicMessage(channelId: number, topic: string, messageId: number): void {
  const known = channelTopics.value.get(channelId);
  if (!known) return;
  const rest = known.filter((t) => t.name.toLowerCase() !== topic.toLowerCase());
  channelTopics.value = replaceIn(channelTopics.value, channelId, [{ name: topic, max_id: messageId }, ...rest]);
}

export function setTopicPolicy(channelId: number, topic: string, policy: 0 | 1 | 2 | 3): Promise<unknown> {
  return ok(api.POST('/user_topics', { body: { stream_id: channelId, topic, visibility_policy: policy } }));
}

/**
 * Sets a flag on every message of a narrow, in the server's batches: each
 * request covers at most a few thousand, so it goes on from where the last
 * one stopped until the newest message was reached.
 */
export async function flagNarrow(narrow: Narrow, flag: 'read' | 'starred', op: 'add' | 'remove' = 'add'): Promise<void> {
  let anchor = 'oldest';
  let includeAnchor = true;
  for (;;) {
    const r = await ok(
      api.POST('/messages/flags/narrow', {
        body: {
          anchor,
          include_anchor: includeAnchor,
          num_before: 0,
          num_after: 5000,
          narrow: narrow.map((t) => ({ operator: t.operator, operand: t.operand, negated: t.negated ?? false })),
          op,
          flag,
        },
      }),
    );
    if (r.found_newest || r.last_processed_id === null) return;
    anchor = String(r.last_processed_id);
    includeAnchor = false;
  }
}

export function isResolved(topic: string): boolean {
  return topic.startsWith(RESOLVED_PREFIX);
}

/** Resolving adds the prefix; unresolving takes off every copy of it, as Zulip does. */
export function resolvedName(topic: string, resolve: boolean): string {
  let bare = topic;
  while (bare.startsWith(RESOLVED_PREFIX)) bare = bare.slice(RESOLVED_PREFIX.length);
  return resolve ? RESOLVED_PREFIX + bare : bare;
}

/** The newest message of a topic the client knows of: from the channel's topic list, or the open list. */
export function newestKnownId(channelId: number, topic: string): number | null {
  const t = topic.toLowerCase();
  let best = channelTopics.value.get(channelId)?.find((s) => s.name.toLowerCase() === t)?.max_id ?? null;
  for (const m of view.value?.messages ?? []) {
    if (m.type === 'stream' && m.stream_id === channelId && m.subject.toLowerCase() === t && (best === null || m.id > best)) best = m.id;
  }
  return best;
}

export type PropagateMode = 'change_one' | 'change_later' | 'change_all';

/** Renames or moves messages through PATCH /messages/{id}: one, it and later ones, or the whole topic. */
export function moveMessages(
  messageId: number,
  to: { channelId?: number; topic?: string },
  mode: PropagateMode,
  notify: { old: boolean; new: boolean } = { old: true, new: true },
): Promise<unknown> {
  return ok(
    api.PATCH('/messages/{message_id}', {
      params: { path: { message_id: messageId } },
      body: {
        ...(to.channelId !== undefined ? { stream_id: to.channelId } : {}),
        ...(to.topic !== undefined ? { topic: to.topic } : {}),
        propagate_mode: mode,
        send_notification_to_old_thread: notify.old,
        send_notification_to_new_thread: notify.new,
      },
    }),
  );
}

export async function resolveTopic(channelId: number, topic: string, resolve: boolean): Promise<void> {
  const id = newestKnownId(channelId, topic) ?? (await loadTopics(channelId), newestKnownId(channelId, topic));
  if (id === null) throw new Error('No message of this topic is known');
  // Zulip resolves by renaming the whole topic, and tells the topic (not the old name) about it.
  await moveMessages(id, { topic: resolvedName(topic, resolve) }, 'change_all', { old: false, new: true });
}
