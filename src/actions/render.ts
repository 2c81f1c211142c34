import type { Knex } from 'knex';
import { extractMentionCandidates, renderMessage, RenderResult } from '../markdown/zulip';
import { getRenderLookups } from '../queries/render-context';

export interface RenderedMessage extends RenderResult {
  /** can_mention_group of each mentioned group, for the permission check. */
  mentionedGroups: Array<{ id: number; name: string; can_mention_group: number | null }>;
}

/** Renders content for an organization: a cheap scan, one batch of lookups, then the renderer. */
export async function renderForRealm(q: Knex | Knex.Transaction, realmId: number, content: string): Promise<RenderedMessage> {
  const candidates = extractMentionCandidates(content);
  const found = await getRenderLookups(q, realmId, candidates);
  const usersByName = new Map<string, Array<{ id: number; full_name: string }>>();
  const usersById = new Map<number, { id: number; full_name: string }>();
  for (const u of found.users) {
    if (usersById.has(u.id)) continue;
    usersById.set(u.id, u);
    const key = u.full_name.toLowerCase();
    usersByName.set(key, [...(usersByName.get(key) ?? []), u]);
  }
  const result = renderMessage(content, {
    usersByName,
    usersById,
    groupsByName: new Map(found.groups.map((g) => [g.name.toLowerCase(), { id: g.id, name: g.name }])),
    channelsByName: new Map(found.channels.map((c) => [c.name.toLowerCase(), { id: c.id, name: c.name }])),
  });
  return { ...result, mentionedGroups: found.groups.filter((g) => result.mentionedGroupIds.has(g.id)) };
}
