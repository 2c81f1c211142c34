/** User, group and wildcard mentions: `@**name**`, `@**name|id**`, `@*group*`, and their silent `@_` forms. */
import type MarkdownIt from 'markdown-it';
import { escapeHtml } from './html';
import { BEFORE_MENTION, matchAt, mayStartMention } from './inline-match';
import type { MentionableUser, RenderContext, RenderEnv, RenderResult } from './render-context';

type StateInline = MarkdownIt.StateInline;

// Sticky versions for the inline rules (matched at an exact position).
const USER_MENTION_AT = /@(_?)\*\*([^*]+)\*\*/y;
const GROUP_MENTION_AT = /@(_?)\*([^*]+)\*/y;

// Global versions for the cheap pre-render scan (./mention-candidates.ts).
export const USER_MENTION_SCAN = new RegExp(String.raw`${BEFORE_MENTION}@_?\*\*([^*]+)\*\*`, 'g');
export const GROUP_MENTION_SCAN = new RegExp(String.raw`${BEFORE_MENTION}@_?\*([^*]+)\*`, 'g');

/** `@**name|id**` and `@**|id**`: the id picks the user, the name must then match. */
export const MENTION_WITH_ID = /^(.+)?\|(\d+)$/;

// Wildcards are matched case-sensitively, exactly as typed (zerver/lib/mention.py).
const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);
const TOPIC_WILDCARDS = new Set(['topic']);

export type MentionMeta =
  | { kind: 'user'; id: number; name: string; silent: boolean }
  | { kind: 'group'; id: number; name: string; silent: boolean }
  | { kind: 'stream_wildcard' | 'topic_wildcard'; name: string; silent: boolean };

function hasUserNamedExactly(ctx: RenderContext, name: string): boolean {
  return (ctx.usersByName.get(name.toLowerCase()) ?? []).some((user) => user.full_name === name);
}

function resolveUserById(ctx: RenderContext, name: string | undefined, id: number): MentionableUser | undefined {
  const user = ctx.usersById.get(id);
  // Zulip treats @**Alice|12** as invalid when user 12 is not named exactly
  // "Alice", so a stale or forged name cannot ride on someone else's id.
  if (user === undefined || (name !== undefined && user.full_name !== name)) return undefined;
  return user;
}

function resolveUserMention(ctx: RenderContext, body: string, silent: boolean): MentionMeta | undefined {
  const withId = MENTION_WITH_ID.exec(body);
  if (withId) {
    const user = resolveUserById(ctx, withId[1], Number(withId[2]));
    return user && { kind: 'user', id: user.id, name: user.full_name, silent };
  }
  // Wildcards win unless someone is literally named "all", "topic", …
  if (!hasUserNamedExactly(ctx, body)) {
    if (STREAM_WILDCARDS.has(body)) return { kind: 'stream_wildcard', name: body, silent };
    if (TOPIC_WILDCARDS.has(body)) return { kind: 'topic_wildcard', name: body, silent };
  }
  const users = ctx.usersByName.get(body.toLowerCase());
  // Two users with the same name and no id to tell them apart: not a mention.
  if (users === undefined || users.length !== 1) return undefined;
  const user = users[0]!;
  return { kind: 'user', id: user.id, name: user.full_name, silent };
}

function resolveGroupMention(ctx: RenderContext, body: string, silent: boolean): MentionMeta | undefined {
  const group = ctx.groupsByName.get(body.toLowerCase());
  return group && { kind: 'group', id: group.id, name: group.name, silent };
}

function pushMention(state: StateInline, meta: MentionMeta): void {
  const token = state.push('zulip_mention', 'span', 0);
  token.meta = meta;
}

/** `@**Full Name**`, `@**Name|12**`, `@**|12**`, `@_**…**` (silent), `@*group*`, `@_*group*`. */
export function mentionRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */ || !mayStartMention(state.src, state.pos)) return false;
  const { ctx } = state.env as RenderEnv;
  const user = matchAt(USER_MENTION_AT, state);
  const group = user ? null : matchAt(GROUP_MENTION_AT, state);
  const m = user ?? group;
  if (!m) return false;
  const isSilent = m[1] === '_';
  const meta = user ? resolveUserMention(ctx, m[2]!, isSilent) : resolveGroupMention(ctx, m[2]!, isSilent);
  // Unresolved: fall through, so the text renders as ordinary Markdown
  // (Zulip shows "@**Nobody**" as "@<strong>Nobody</strong>").
  if (!meta) return false;
  if (!silent) pushMention(state, meta);
  state.pos += m[0].length;
  return true;
}

/** Sets the result's mention flags for a mention token (after the parse, when quotes are known). */
export function recordMention(meta: MentionMeta, inQuote: boolean, result: RenderResult): void {
  // Zulip silences every mention inside a blockquote (BlockQuoteProcessor.clean),
  // so quoting a message does not notify the people it mentioned.
  if (inQuote) meta.silent = true;
  if (meta.silent) return;
  if (meta.kind === 'user') result.mentionedUserIds.add(meta.id);
  else if (meta.kind === 'group') result.mentionedGroupIds.add(meta.id);
  else if (meta.kind === 'stream_wildcard') result.streamWildcard = true;
  else result.topicWildcard = true;
}

/** Attributes in alphabetical order, like Zulip's output. */
export function renderMention(meta: MentionMeta): string {
  const text = escapeHtml(meta.silent ? meta.name : `@${meta.name}`);
  const silent = meta.silent ? ' silent' : '';
  switch (meta.kind) {
    case 'user':
      return `<span class="user-mention${silent}" data-user-id="${meta.id}">${text}</span>`;
    case 'group':
      return `<span class="user-group-mention${silent}" data-user-group-id="${meta.id}">${text}</span>`;
    case 'stream_wildcard':
      return `<span class="user-mention channel-wildcard-mention${silent}" data-user-id="*">${text}</span>`;
    case 'topic_wildcard':
      // Zulip gives the topic wildcard no data-user-id at all.
      return `<span class="topic-mention${silent}">${text}</span>`;
  }
}
