import { CHANNEL_LINK_SCAN } from './channel-links';
import { CUSTOM_EMOJI_SCAN } from './emoji-rule';
import { GROUP_MENTION_SCAN, MENTION_WITH_ID, USER_MENTION_SCAN } from './mentions';
import type { MentionCandidates } from './render-context';

function addUnique<T>(list: T[], seen: Set<T>, value: T): void {
  if (!seen.has(value)) {
    seen.add(value);
    list.push(value);
  }
}

/**
 * Everything the content might mention, found with regexes only (code blocks
 * are not excluded, so this can over-report). Fetch these, build the
 * RenderContext maps, then call renderMessage.
 */
export function extractMentionCandidates(content: string): MentionCandidates {
  const found: MentionCandidates = { userNames: [], userIds: [], groupNames: [], channelNames: [], emojiNames: [] };
  const seenNames = new Set<string>();
  const seenIds = new Set<number>();
  const seenGroups = new Set<string>();
  const seenChannels = new Set<string>();
  for (const m of content.matchAll(USER_MENTION_SCAN)) {
    const withId = MENTION_WITH_ID.exec(m[1]!);
    // Wildcard words are included: a user literally named "all" overrides the wildcard.
    if (withId) addUnique(found.userIds, seenIds, Number(withId[2]));
    else addUnique(found.userNames, seenNames, m[1]!);
  }
  for (const m of content.matchAll(GROUP_MENTION_SCAN)) addUnique(found.groupNames, seenGroups, m[1]!);
  for (const m of content.matchAll(CHANNEL_LINK_SCAN)) {
    const body = m[1]!;
    addUnique(found.channelNames, seenChannels, body);
    const separator = body.indexOf('>');
    if (separator > 0) addUnique(found.channelNames, seenChannels, body.slice(0, separator));
  }
  const seenEmoji = new Set<string>();
  for (const m of content.matchAll(CUSTOM_EMOJI_SCAN)) addUnique(found.emojiNames, seenEmoji, m[1]!);
  return found;
}
