/** What the Zulip renderer is given (names the caller read from the database) and what it answers. */
import type { CompiledLinkifier } from '../domain/linkifiers';

export interface MentionableUser {
  id: number;
  full_name: string;
}

export interface RenderContext {
  /** Keyed by lower-cased full name; several users may share a name. */
  usersByName: Map<string, MentionableUser[]>;
  usersById: Map<number, MentionableUser>;
  /** Keyed by lower-cased group name. */
  groupsByName: Map<string, { id: number; name: string }>;
  /** Keyed by lower-cased channel name. */
  channelsByName: Map<string, { id: number; name: string }>;
  /** Active realm emoji keyed by name (exact). */
  realmEmoji?: Map<string, { id: string; name: string; source_url: string }>;
  /** The organization's linkifiers, in the order they apply. */
  linkifiers?: readonly CompiledLinkifier[];
}

export interface RenderResult {
  html: string;
  /** Users mentioned non-silently (these get the `mentioned` flag). */
  mentionedUserIds: Set<number>;
  /** Groups mentioned non-silently. */
  mentionedGroupIds: Set<number>;
  /** A non-silent @**all** / @**everyone** / @**channel** / @**stream**. */
  streamWildcard: boolean;
  /** A non-silent @**topic**. */
  topicWildcard: boolean;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
  isMeMessage: boolean;
}

export interface MentionCandidates {
  /** Names from @**name** (as typed, deduplicated); match them case-insensitively. */
  userNames: string[];
  /** Ids from @**name|id** and @**|id**. */
  userIds: number[];
  /** Names from @*group* (as typed). */
  groupNames: string[];
  /** Names from #**channel** and #**channel>topic** (as typed). */
  channelNames: string[];
  /** Names in `:name:` that a custom emoji could have (a superset: each `:` may close one name and open the next). */
  emojiNames: string[];
}

/** markdown-it's env for one render: rules read the context and write the result. */
export interface RenderEnv {
  ctx: RenderContext;
  result: RenderResult;
}
