import { signal } from '@preact/signals';
import { api, ok } from '../api/client';
import { replaceIn } from './store';

/**
 * Each channel's topics, newest first (GET /users/me/{stream_id}/topics),
 * fetched when the compose box first needs them and again after a minute,
 * since new topics appear all the time.
 */
export const topicsByChannel = signal<ReadonlyMap<number, readonly string[]>>(new Map());
const fetchedAt = new Map<number, number>();
const FRESH_MS = 60_000;

export async function loadTopics(channelId: number): Promise<readonly string[]> {
  const at = fetchedAt.get(channelId);
  if (at !== undefined && Date.now() - at < FRESH_MS) return topicsByChannel.value.get(channelId) ?? [];
  fetchedAt.set(channelId, Date.now());
  try {
    const r = await ok(api.GET('/users/me/{stream_id}/topics', { params: { path: { stream_id: channelId } } }));
    const names = r.topics.map((t) => t.name);
    topicsByChannel.value = replaceIn(topicsByChannel.value, channelId, names);
    return names;
  } catch {
    fetchedAt.delete(channelId);
    return [];
  }
}
