import type { Knex } from 'knex';
import { extractMentionCandidates, renderMessage, RenderResult } from '../markdown/zulip';
import { getRenderLookups, type MentionGroupRow } from '../queries/render-context';
import { findInaccessibleUsers } from '../access/user-access';
import { canSeeChannel, inGroup, Caller, Viewer } from '../access/viewer';
import { truncateContent } from '../domain/topics';
import { emojiSourceUrl } from '../domain/custom-emoji';
import type { CompiledLinkifier } from '../domain/linkifiers';
import type { AppContext } from '../context';

export interface RenderedMessage extends RenderResult {
  /** can_mention_group of each mentioned group, for the permission check. */
  mentionedGroups: MentionGroupRow[];
}

/**
 * Renders content for an organization: a cheap scan, one batch of lookups,
 * then the renderer. Channel links resolve only for channels the sender may
 * know exist (otherwise a link would reveal a private channel's id), and
 * user mentions only for people the sender may know about: as in Zulip
 * (MentionBackend drops get_inaccessible_user_ids before rendering), a
 * mention of anyone else — by id, name|id or name, silent or not — stays
 * plain text and flags nobody, so its HTML cannot reveal a name, and a
 * name shared with such a person resolves to the one the sender may know.
 * Group mentions resolve by group name; as in Zulip they flag the group's
 * members among the message's receivers.
 */
export async function renderForRealm(
  q: Knex | Knex.Transaction,
  realmId: number,
  content: string,
  sender: Viewer | null,
  /** The sender is in can_access_all_users_group (internal messages: true). */
  mayAccessAllUsers = true,
  /** The organization's linkifiers (src/cache/linkifiers.ts); none where the caller passes none. */
  linkifiers: readonly CompiledLinkifier[] = [],
): Promise<RenderedMessage> {
  const candidates = extractMentionCandidates(content);
  const found = await getRenderLookups(q, realmId, candidates);
  const channels = sender ? found.channels.filter((c) => canSeeChannel(sender, c)) : found.channels;
  if (sender) {
    const hidden = await findInaccessibleUsers(q, sender, found.users, mayAccessAllUsers);
    found.users = found.users.filter((u) => !hidden.has(u.id));
  }
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
    channelsByName: new Map(channels.map((c) => [c.name.toLowerCase(), { id: c.id, name: c.name }])),
    linkifiers,
    realmEmoji: new Map(
      found.emoji.map((e) => [
        e.name,
        { id: String(e.id), name: e.name, source_url: emojiSourceUrl(realmId, e.file_name ?? `${e.id}.png`) },
      ]),
    ),
  });
  return { ...result, mentionedGroups: found.groups.filter((g) => result.mentionedGroupIds.has(g.id)) };
}

/**
 * POST /messages/render: the HTML sending this content would store, for a
 * preview; nothing is written. Content too long for a message is cut as
 * sending cuts it, so the preview shows what would be sent.
 */
export async function getRenderedPreview(ctx: AppContext, viewer: Caller, content: string): Promise<string> {
  const realm = viewer.realm;
  const linkifiers = await ctx.caches.linkifiers.get(realm.id);
  const mayAccessAll = inGroup(viewer, realm.can_access_all_users_group);
  const rendered = await renderForRealm(ctx.db, realm.id, truncateContent(content), viewer, mayAccessAll, linkifiers);
  return rendered.html;
}
