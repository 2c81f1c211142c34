/**
 * Zulip-flavoured Markdown → safe HTML for message content.
 *
 * Built on markdown-it with raw HTML disabled (so `<script>` is escaped) and
 * our own rules for Zulip's syntax: @-mentions, group mentions, wildcards,
 * channel/topic links, :emoji:, ```quote / ```spoiler fences and inline image
 * previews. The HTML shapes (class names, attributes, text) follow what the
 * Zulip server stores in `rendered_content`, because Zulip clients parse it;
 * see zerver/lib/markdown/__init__.py, zerver/lib/mention.py,
 * zerver/lib/markdown/fenced_code.py and
 * zerver/tests/fixtures/markdown_test_cases.json in zulip/zulip.
 *
 * Rendering needs names and ids from the database. Callers first run
 * `extractMentionCandidates` on the raw content, fetch those rows, then call
 * `renderMessage` with the maps; the renderer itself never touches the DB.
 */
import MarkdownIt from 'markdown-it';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { canonicalEmojiName, emojiCodeForName } from './emoji';

type Token = MarkdownIt.Token;
type TokenConstructor = MarkdownIt.StateCore['Token'];
type StateInline = MarkdownIt.StateInline;
type StateBlock = MarkdownIt.StateBlock;
type StateCore = MarkdownIt.StateCore;

// ---------------------------------------------------------------------------
// Public types

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

interface RenderEnv {
  ctx: RenderContext;
  result: RenderResult;
}

// ---------------------------------------------------------------------------
// Syntax (regexes are compiled once, here)

// Zulip only starts a mention or channel link at the start of the text or
// after whitespace or one of ' " ( { [ / < (BEFORE_MENTION_ALLOWED_REGEX in
// zerver/lib/mention.py), so "email@**x**" is not a mention.
const BEFORE_MENTION_CHAR = /[\s'"({[/<]/;
const BEFORE_MENTION = String.raw`(?<![^\s'"({[/<])`;

// Sticky versions for the inline rules (matched at an exact position).
const USER_MENTION_AT = /@(_?)\*\*([^*]+)\*\*/y;
const GROUP_MENTION_AT = /@(_?)\*([^*]+)\*/y;
const CHANNEL_LINK_AT = /#\*\*([^*]+)\*\*/y;

// Global versions for the cheap pre-render scan.
const USER_MENTION_SCAN = new RegExp(String.raw`${BEFORE_MENTION}@_?\*\*([^*]+)\*\*`, 'g');
const GROUP_MENTION_SCAN = new RegExp(String.raw`${BEFORE_MENTION}@_?\*([^*]+)\*`, 'g');
const CHANNEL_LINK_SCAN = new RegExp(String.raw`${BEFORE_MENTION}#\*\*([^*]+)\*\*`, 'g');

/** `@**name|id**` and `@**|id**`: the id picks the user, the name must then match. */
const MENTION_WITH_ID = /^(.+)?\|(\d+)$/;
/**
 * `#**channel>topic@123**` (message link) and `#**channel>topic**`. The
 * topic may be empty (feature level 346): `#**channel>**` links to the
 * channel's empty topic and `#**channel>@123**` to a message in it.
 */
const CHANNEL_TOPIC_MESSAGE = /^([^*>]+)>([^*]*)@(\d+)$/;
const CHANNEL_TOPIC = /^([^*>]+)>([^*]*)$/;

// Wildcards are matched case-sensitively, exactly as typed (zerver/lib/mention.py).
const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);
const TOPIC_WILDCARDS = new Set(['topic']);

/** `:name:` — Zulip's EMOJI_REGEX is `:[\w\-\+]+:` with a Unicode \w. */
const EMOJI_NAME = String.raw`:([\p{L}\p{M}\p{N}_+\-]+):`;
/** Names a custom emoji may have (src/domain/custom-emoji.ts), each followed by a colon that is not consumed. */
const CUSTOM_EMOJI_SCAN = /:([0-9a-z_-]+)(?=:)/g;
/** A possible Unicode emoji sequence (UTS #51 EBNF, as Zulip's POSSIBLE_EMOJI_RE). */
const EMOJI_UNIT = String.raw`\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?`;
const EMOJI_SEQUENCE = String.raw`\p{Regional_Indicator}\p{Regional_Indicator}|${EMOJI_UNIT}(?:\u200D(?:\p{Regional_Indicator}\p{Regional_Indicator}|${EMOJI_UNIT}))*`;
const EMOJI_SCAN = new RegExp(`${EMOJI_NAME}|(${EMOJI_SEQUENCE})`, 'gu');
/**
 * Zulip leaves single characters that default to text presentation alone:
 * digits, '#', '↔', '❤' without U+FE0F and the like stay text.
 */
const TEXT_PRESENTATION = /^\P{Emoji_Presentation}\u20E3?$/u;
const MAYBE_EMOJI = /[:\u0080-\u{10FFFF}]/u;
const UNDERSCORES = /_/g;
const SPACES = / /g;

/** Zulip's FENCE_RE: fence, then optional `{.lang header}`. */
const FENCE_LINE = /^(`{3,}|~{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+\-./#]+)[ ]*([^ ~`][^~`]*)?\}?)?$/;
const FENCE_START = /^(?:`{3,}|~{3,})/;
const FENCE_INFO_LANG = /^\{?\.?([a-zA-Z0-9_+\-./#]+)/;
const QUOTE_LANGS = new Set(['quote', 'quoted']);
const SPOILER_LANG = 'spoiler';

/** Schemes Zulip lets through in links (sanitize_url); anything else stays text. */
const ALLOWED_SCHEMES = new Set([
  'http',
  'https',
  'ftp',
  'file',
  'bitcoin',
  'geo',
  'im',
  'irc',
  'ircs',
  'magnet',
  'mailto',
  'matrix',
  'mms',
  'news',
  'nntp',
  'openpgp4fpr',
  'sip',
  'sms',
  'smsto',
  'ssh',
  'tel',
  'urn',
  'webcal',
  'wtai',
  'xmpp',
]);
const URL_SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;
const QUERY_OR_FRAGMENT = /[?#]/;
const HOST_END = /[/?#:]/;
/** Zulip's IMAGE_EXTENSIONS: links to these get an inline preview. */
const IMAGE_EXTENSION = /\.(?:bmp|gif|jpe|jpeg|jpg|png|webp)$/;
/** Zulip stops previewing when a message has more distinct links than this. */
const INLINE_PREVIEW_LIMIT = 24;
/**
 * File extensions that are also TLDs; Zulip does not auto-link "readme.md" or
 * "views.py" (list_of_tlds drops them).
 */
const NON_LINK_TLDS = new Set(['java', 'md', 'mov', 'py', 'zip']);

/**
 * Pygments lexer names for common fence languages; Zulip records the lexer
 * name in data-code-language (`py` → "Python"), or the lower-cased language
 * itself when Pygments does not know it. This is a best-effort subset.
 */
const CODE_LANGUAGE_NAMES: Record<string, string> = {
  python: 'Python',
  py: 'Python',
  python3: 'Python',
  py3: 'Python',
  python2: 'Python 2.x',
  py2: 'Python 2.x',
  javascript: 'JavaScript',
  js: 'JavaScript',
  typescript: 'TypeScript',
  ts: 'TypeScript',
  json: 'JSON',
  html: 'HTML',
  xml: 'XML',
  css: 'CSS',
  scss: 'SCSS',
  bash: 'Bash',
  sh: 'Bash',
  shell: 'Bash',
  zsh: 'Bash',
  ksh: 'Bash',
  console: 'Bash Session',
  sql: 'SQL',
  java: 'Java',
  c: 'C',
  cpp: 'C++',
  'c++': 'C++',
  csharp: 'C#',
  'c#': 'C#',
  go: 'Go',
  golang: 'Go',
  rust: 'Rust',
  rs: 'Rust',
  ruby: 'Ruby',
  rb: 'Ruby',
  php: 'PHP',
  yaml: 'YAML',
  yml: 'YAML',
  markdown: 'Markdown',
  md: 'Markdown',
  tex: 'TeX',
  latex: 'TeX',
  diff: 'Diff',
  patch: 'Diff',
  text: 'Text only',
  kotlin: 'Kotlin',
  swift: 'Swift',
  haskell: 'Haskell',
  hs: 'Haskell',
  scala: 'Scala',
  perl: 'Perl',
  lua: 'Lua',
  docker: 'Docker',
  dockerfile: 'Docker',
  ini: 'INI',
  toml: 'TOML',
  powershell: 'PowerShell',
  dart: 'Dart',
  elixir: 'Elixir',
  erlang: 'Erlang',
  clojure: 'Clojure',
  ocaml: 'OCaml',
  graphql: 'GraphQL',
  make: 'Makefile',
  makefile: 'Makefile',
};

// ---------------------------------------------------------------------------
// Small helpers

const escapeHtml = (text: string): string => md.utils.escapeHtml(text);

const CODE_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const CODE_SPECIAL = /[&<>"']/g;
/** Pygments also escapes the apostrophe in code blocks. */
const escapeCode = (text: string): string => text.replace(CODE_SPECIAL, (c) => CODE_ESCAPES[c]!);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const PYTHON_QUOTE_EXTRA = /[!'()]/g;
const HASH_SPECIAL = /[%.]/g;

/**
 * Zulip's encode_hash_component: Python's quote(s, safe="*"), then '%' → '.'
 * and '.' → '.2E', so "some topic" → "some.20topic".
 */
export function encodeHashComponent(text: string): string {
  const percent = encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD')).replace(
    PYTHON_QUOTE_EXTRA,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return percent.replace(HASH_SPECIAL, (c) => (c === '%' ? '.' : '.2E'));
}

/** "/#narrow/channel/7-general-chat" — spaces in the name become '-' first (encode_channel). */
export function channelNarrowPath(channelId: number, channelName: string): string {
  return `/#narrow/channel/${channelId}-${encodeHashComponent(channelName.replace(SPACES, '-'))}`;
}

function trimNewlines(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) === 0x0a) start++;
  while (end > start && text.charCodeAt(end - 1) === 0x0a) end--;
  return text.slice(start, end);
}

function mayStartMention(src: string, pos: number): boolean {
  return pos === 0 || BEFORE_MENTION_CHAR.test(src.charAt(pos - 1));
}

/** Matches a sticky regex at `pos` without running past the inline range. */
function matchAt(re: RegExp, state: StateInline): RegExpExecArray | null {
  re.lastIndex = state.pos;
  const m = re.exec(state.src);
  return m && m.index + m[0].length <= state.posMax ? m : null;
}

// ---------------------------------------------------------------------------
// Resolving names against the context

type MentionMeta =
  | { kind: 'user'; id: number; name: string; silent: boolean }
  | { kind: 'group'; id: number; name: string; silent: boolean }
  | { kind: 'stream_wildcard' | 'topic_wildcard'; name: string; silent: boolean };

type ChannelLinkMeta =
  | { kind: 'channel'; id: number; name: string }
  | { kind: 'topic'; id: number; name: string; topic: string }
  | { kind: 'message'; id: number; name: string; topic: string; messageId: string };

type EmojiMeta = { kind: 'unicode'; code: string; name: string } | { kind: 'realm'; name: string; url: string };

interface ImagePreview {
  url: string;
  title: string | undefined;
}

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

function resolveChannelLink(ctx: RenderContext, body: string): ChannelLinkMeta | undefined {
  const find = (name: string) => ctx.channelsByName.get(name.toLowerCase());
  // Same order as Zulip: message link, then topic link, then the whole body
  // as a channel name (a channel may contain '>').
  const message = CHANNEL_TOPIC_MESSAGE.exec(body);
  const messageChannel = message && find(message[1]!);
  if (message && messageChannel) {
    return { kind: 'message', ...messageChannel, topic: message[2]!, messageId: message[3]! };
  }
  const topic = CHANNEL_TOPIC.exec(body);
  const topicChannel = topic && find(topic[1]!);
  if (topic && topicChannel) return { kind: 'topic', ...topicChannel, topic: topic[2]! };
  const channel = find(body);
  return channel && { kind: 'channel', ...channel };
}

function resolveEmojiName(ctx: RenderContext, name: string): EmojiMeta | undefined {
  // Realm emoji shadow Unicode emoji of the same name, as in Zulip.
  const custom = ctx.realmEmoji?.get(name);
  if (custom && isSafeImageSource(custom.source_url)) return { kind: 'realm', name, url: custom.source_url };
  const code = emojiCodeForName(name);
  return code === undefined ? undefined : { kind: 'unicode', code, name };
}

function resolveEmojiCharacters(sequence: string): EmojiMeta | undefined {
  if (TEXT_PRESENTATION.test(sequence)) return undefined;
  const parts: string[] = [];
  for (const ch of sequence) {
    const point = ch.codePointAt(0)!;
    if (point !== 0xfe0f) parts.push(point.toString(16).padStart(4, '0'));
  }
  const code = parts.join('-');
  const name = canonicalEmojiName(code);
  return name === undefined ? undefined : { kind: 'unicode', code, name };
}

// ---------------------------------------------------------------------------
// Links

function isSafeImageSource(url: string): boolean {
  const scheme = URL_SCHEME.exec(url)?.[1]?.toLowerCase();
  return scheme === undefined ? url.startsWith('/') : scheme === 'http' || scheme === 'https';
}

/** markdown-it calls this for every link target; rejected links stay literal text. */
function validateLink(url: string): boolean {
  const scheme = URL_SCHEME.exec(url)?.[1];
  return scheme === undefined || ALLOWED_SCHEMES.has(scheme.toLowerCase());
}

/**
 * Zulip's sanitize_url for scheme-less targets: "/path" and "#fragment" stay
 * relative, "a@b.c" becomes mailto:, anything else is assumed to be http://.
 */
function finalizeHref(href: string): string {
  if (URL_SCHEME.test(href) || href.startsWith('/') || href.startsWith('#') || href === '') return href;
  if (href.includes('@')) return `mailto:${href}`;
  return `http://${href}`;
}

function isUploadLink(href: string): boolean {
  return href.startsWith('/user_uploads/');
}

function isImageLink(href: string): boolean {
  const scheme = URL_SCHEME.exec(href)?.[1]?.toLowerCase();
  let path: string;
  if (scheme === undefined) {
    path = href.split(QUERY_OR_FRAGMENT, 1)[0]!;
  } else if (scheme === 'http' || scheme === 'https') {
    try {
      path = new URL(href).pathname;
    } catch {
      return false;
    }
  } else {
    return false;
  }
  return IMAGE_EXTENSION.test(path.toLowerCase());
}

// ---------------------------------------------------------------------------
// Inline rules

function pushMention(state: StateInline, meta: MentionMeta): void {
  const token = state.push('zulip_mention', 'span', 0);
  token.meta = meta;
}

/** `@**Full Name**`, `@**Name|12**`, `@**|12**`, `@_**…**` (silent), `@*group*`, `@_*group*`. */
function mentionRule(state: StateInline, silent: boolean): boolean {
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

/** `#**channel**`, `#**channel>topic**`, `#**channel>topic@123**`. */
function channelLinkRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */ || !mayStartMention(state.src, state.pos)) return false;
  const m = matchAt(CHANNEL_LINK_AT, state);
  if (!m) return false;
  const meta = resolveChannelLink((state.env as RenderEnv).ctx, m[1]!);
  if (!meta) return false;
  if (!silent) state.push('zulip_channel_link', 'a', 0).meta = meta;
  state.pos += m[0].length;
  return true;
}

/**
 * Zulip disables `_` for emphasis and strong (`_foo_` and `__init__` stay as
 * typed), so a run of underscores is plain text.
 */
function underscoreRule(state: StateInline, silent: boolean): boolean {
  let end = state.pos;
  while (end < state.posMax && state.src.charCodeAt(end) === 0x5f /* _ */) end++;
  if (end === state.pos) return false;
  if (!silent) state.pending += state.src.slice(state.pos, end);
  state.pos = end;
  return true;
}

// ---------------------------------------------------------------------------
// Block rule: ```quote and ```spoiler fences

interface FenceLine {
  fence: string;
  lang: string | undefined;
  header: string | undefined;
}

function parseFenceLine(text: string): FenceLine | undefined {
  // After the fence, neither the language nor the header may hold a backtick or a tilde, so a
  // line with one there cannot match. Refused before FENCE_LINE runs: its language and header
  // match the same letters, and on such a line it tried every split of them (quadratic: a
  // 10,000-character line took 0.9 s, nested quote fences multiplied it).
  const fence = FENCE_START.exec(text);
  if (!fence || /[`~]/.test(text.slice(fence[0].length))) return undefined;
  const m = FENCE_LINE.exec(text);
  if (!m) return undefined;
  return { fence: m[1]!, lang: m[2]?.toLowerCase(), header: m[3]?.trim() };
}

function lineText(state: StateBlock, line: number): string {
  return state.src.slice(state.bMarks[line]! + state.tShift[line]!, state.eMarks[line]);
}

const isContainerLang = (lang: string | undefined): boolean => lang !== undefined && (QUOTE_LANGS.has(lang) || lang === SPOILER_LANG);

/**
 * Finds where a container fence ends. Like Zulip's fenced_code preprocessor,
 * fences opened inside it nest (a ``` code block inside a ~~~quote), and a
 * fence that is never closed runs to the end of the document.
 */
function findFenceEnd(state: StateBlock, startLine: number, endLine: number, fence: string) {
  const open: Array<{ fence: string; container: boolean }> = [{ fence, container: true }];
  for (let line = startLine + 1; line < endLine; line++) {
    const text = lineText(state, line);
    if (text !== '' && state.sCount[line]! < state.blkIndent) return { contentEnd: line, next: line };
    const top = open[open.length - 1]!;
    if (text.trimEnd() === top.fence) {
      open.pop();
      if (open.length === 0) return { contentEnd: line, next: line + 1 };
      continue;
    }
    const inner = top.container ? parseFenceLine(text) : undefined;
    if (inner) open.push({ fence: inner.fence, container: isContainerLang(inner.lang) });
  }
  return { contentEnd: endLine, next: endLine };
}

function pushSpoilerHeader(state: StateBlock, header: string | undefined, line: number): void {
  state.push('zulip_spoiler_open', 'div', 1);
  if (header) {
    state.push('paragraph_open', 'p', 1).map = [line, line + 1];
    const inline = state.push('inline', '', 0);
    inline.content = header;
    inline.map = [line, line + 1];
    inline.children = [];
    state.push('paragraph_close', 'p', -1);
  }
  state.push('zulip_spoiler_content', 'div', 0);
}

function containerFenceRule(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  if (state.sCount[startLine]! - state.blkIndent >= 4) return false;
  const opening = parseFenceLine(lineText(state, startLine));
  if (!opening || !isContainerLang(opening.lang)) return false;
  if (silent) return true;

  const { contentEnd, next } = findFenceEnd(state, startLine, endLine, opening.fence);
  // Zulip outputs nothing at all for a fence with no lines inside.
  if (contentEnd > startLine + 1) {
    const oldParent = state.parentType;
    const oldLineMax = state.lineMax;
    state.parentType = 'blockquote';
    state.lineMax = contentEnd;
    const isQuote = QUOTE_LANGS.has(opening.lang!);
    if (isQuote) {
      // Zulip turns ```quote into "> " lines, so it is an ordinary blockquote
      // (and mentions inside it are silenced like in any quote).
      const open = state.push('blockquote_open', 'blockquote', 1);
      open.markup = opening.fence;
      open.map = [startLine, next];
    } else {
      pushSpoilerHeader(state, opening.header, startLine);
    }
    state.md.block.tokenize(state, startLine + 1, contentEnd);
    state.push(isQuote ? 'blockquote_close' : 'zulip_spoiler_close', isQuote ? 'blockquote' : 'div', -1);
    state.parentType = oldParent;
    state.lineMax = oldLineMax;
  }
  state.line = next;
  return true;
}

// ---------------------------------------------------------------------------
// Core rule: emoji (before text_join, so an escaped `\:smile:` stays text)

function emojiTokensFor(token: Token, ctx: RenderContext, TokenCtor: TokenConstructor): Token[] | undefined {
  const text = token.content;
  if (!MAYBE_EMOJI.test(text)) return undefined;
  const pieces: Token[] = [];
  let last = 0;
  const pushText = (content: string): void => {
    if (content === '') return;
    const piece = new TokenCtor('text', '', 0);
    piece.content = content;
    piece.level = token.level;
    pieces.push(piece);
  };
  EMOJI_SCAN.lastIndex = 0;
  for (let m = EMOJI_SCAN.exec(text); m !== null; m = EMOJI_SCAN.exec(text)) {
    const meta = m[1] !== undefined ? resolveEmojiName(ctx, m[1]) : resolveEmojiCharacters(m[2]!);
    if (!meta) continue; // unknown `:name:` stays text, and scanning resumes after it
    pushText(text.slice(last, m.index));
    const emoji = new TokenCtor('zulip_emoji', '', 0);
    emoji.meta = meta;
    emoji.level = token.level;
    pieces.push(emoji);
    last = m.index + m[0].length;
  }
  if (last === 0) return undefined;
  pushText(text.slice(last));
  return pieces;
}

function replaceEmoji(children: Token[], ctx: RenderContext, TokenCtor: TokenConstructor): Token[] {
  let out: Token[] | undefined;
  let autolinkDepth = 0;
  for (let i = 0; i < children.length; i++) {
    const token = children[i]!;
    if (token.markup === 'linkify') autolinkDepth += token.nesting;
    // Text of a bare URL is left alone: "example.com/a:b:c" is one link.
    const pieces = token.type === 'text' && autolinkDepth === 0 ? emojiTokensFor(token, ctx, TokenCtor) : undefined;
    if (pieces) {
      out ??= children.slice(0, i);
      out.push(...pieces);
    } else if (out) {
      out.push(token);
    }
  }
  return out ?? children;
}

function emojiCoreRule(state: StateCore): void {
  const env = state.env as RenderEnv | undefined;
  if (!env?.ctx) return;
  for (const block of state.tokens) {
    if (block.type === 'inline' && block.children) block.children = replaceEmoji(block.children, env.ctx, state.Token);
  }
}

// ---------------------------------------------------------------------------
// Core rule: link clean-up, mention flags and image previews (after text_join)

/** Bare "readme.md" / "views.py" are file names, not links (see NON_LINK_TLDS). */
function isFileNameAutolink(open: Token, text: Token | undefined): boolean {
  if (open.markup !== 'linkify' || text?.type !== 'text') return false;
  const shown = text.content;
  if (shown.includes('://') || shown.includes('@')) return false;
  const host = shown.split(HOST_END, 1)[0]!;
  return NON_LINK_TLDS.has(host.slice(host.lastIndexOf('.') + 1).toLowerCase());
}

/** Index of the link_close matching the link_open at `open`. */
function linkCloseIndex(children: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < children.length; i++) {
    if (children[i]!.type === 'link_open') depth++;
    else if (children[i]!.type === 'link_close' && --depth === 0) return i;
  }
  return children.length - 1;
}

function linkText(children: Token[], open: number, close: number): string {
  let text = '';
  for (let i = open + 1; i < close; i++) {
    const token = children[i]!;
    if (token.type === 'text' || token.type === 'code_inline') text += token.content;
  }
  return text;
}

/** Unwraps file-name autolinks and gives empty links their URL as text (as Zulip does). */
function tidyLinks(children: Token[], TokenCtor: TokenConstructor): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < children.length; i++) {
    const token = children[i]!;
    if (token.type !== 'link_open') {
      out.push(token);
      continue;
    }
    if (isFileNameAutolink(token, children[i + 1])) {
      out.push(children[i + 1]!);
      i = linkCloseIndex(children, i);
      continue;
    }
    token.attrSet('href', finalizeHref(token.attrGet('href') ?? ''));
    out.push(token);
    const close = linkCloseIndex(children, i);
    const onlyBlankText = children.slice(i + 1, close).every((t) => t.type === 'text' && t.content.trim() === '');
    if (onlyBlankText) {
      const filler = new TokenCtor('text', '', 0);
      filler.content = token.attrGet('href') ?? '';
      out.push(filler, children[close]!);
      i = close;
    }
  }
  return out;
}

interface LinkFound {
  inlineIndex: number;
  href: string;
  text: string;
  /** The link is all there is in its paragraph or list item, shown as its URL. */
  alone: boolean;
}

function recordMention(meta: MentionMeta, inQuote: boolean, result: RenderResult): void {
  // Zulip silences every mention inside a blockquote (BlockQuoteProcessor.clean),
  // so quoting a message does not notify the people it mentioned.
  if (inQuote) meta.silent = true;
  if (meta.silent) return;
  if (meta.kind === 'user') result.mentionedUserIds.add(meta.id);
  else if (meta.kind === 'group') result.mentionedGroupIds.add(meta.id);
  else if (meta.kind === 'stream_wildcard') result.streamWildcard = true;
  else result.topicWildcard = true;
}

function scanInline(children: Token[], inlineIndex: number, inQuote: boolean, result: RenderResult): LinkFound[] {
  const links: LinkFound[] = [];
  for (let i = 0; i < children.length; i++) {
    const token = children[i]!;
    if (token.type === 'zulip_mention') recordMention(token.meta as MentionMeta, inQuote, result);
    // Zulip sets has_link for every <a> in the message, channel links included.
    if (token.type === 'zulip_channel_link') result.hasLink = true;
    if (token.type !== 'link_open') continue;
    const href = token.attrGet('href') ?? '';
    result.hasLink = true;
    if (isUploadLink(href)) result.hasAttachment = true;
    const close = linkCloseIndex(children, i);
    const text = linkText(children, i, close);
    const alone = i === 0 && close === children.length - 1 && text === href;
    if (!inQuote) links.push({ inlineIndex, href, text, alone });
  }
  return links;
}

/**
 * Chooses image previews like Zulip's InlineInterestingLinkProcessor: no
 * previews for quoted links, each URL once, none at all past the limit.
 * A paragraph that held nothing but the image URL is replaced by the preview.
 */
function planPreviews(links: LinkFound[], tokens: Token[], result: RenderResult): Map<number, ImagePreview[]> {
  const plan = new Map<number, ImagePreview[]>();
  if (new Set(links.map((link) => link.href)).size > INLINE_PREVIEW_LIMIT) return plan;
  const seen = new Set<string>();
  for (const link of links) {
    if (seen.has(link.href)) continue;
    seen.add(link.href);
    if (!isImageLink(link.href)) continue;
    result.hasImage = true;
    const title = link.text === link.href ? undefined : link.text;
    const previews = plan.get(link.inlineIndex) ?? [];
    previews.push({ url: link.href, title });
    plan.set(link.inlineIndex, previews);
    if (link.alone) hideInline(tokens, link.inlineIndex);
  }
  return plan;
}

/** Drops a paragraph (or a tight list item's text) that held only the image URL. */
function hideInline(tokens: Token[], inlineIndex: number): void {
  const before = tokens[inlineIndex - 1];
  const after = tokens[inlineIndex + 1];
  // Links alone in a heading or table cell stay, as in Zulip.
  if (before?.type !== 'paragraph_open' || after?.type !== 'paragraph_close') return;
  tokens[inlineIndex]!.children = [];
  before.hidden = true;
  after.hidden = true;
}

function previewToken(TokenCtor: TokenConstructor, previews: ImagePreview[]): Token {
  const token = new TokenCtor('zulip_image_preview', 'div', 0);
  token.block = true;
  token.meta = previews;
  return token;
}

/** Previews go right after their paragraph (inside a list item for lists), else at the end. */
function insertPreviews(tokens: Token[], plan: Map<number, ImagePreview[]>, TokenCtor: TokenConstructor): Token[] {
  if (plan.size === 0) return tokens;
  const out: Token[] = [];
  const atEnd: ImagePreview[] = [];
  for (const [index, previews] of plan) {
    if (tokens[index + 1]?.type !== 'paragraph_close') atEnd.push(...previews);
  }
  tokens.forEach((token, i) => {
    out.push(token);
    const previews = token.type === 'paragraph_close' ? plan.get(i - 1) : undefined;
    if (previews) out.push(previewToken(TokenCtor, previews));
  });
  if (atEnd.length > 0) out.push(previewToken(TokenCtor, atEnd));
  return out;
}

function finishCoreRule(state: StateCore): void {
  const env = state.env as RenderEnv | undefined;
  if (!env?.result) return;
  const links: LinkFound[] = [];
  let quoteDepth = 0;
  state.tokens.forEach((token, i) => {
    if (token.type === 'blockquote_open') quoteDepth++;
    else if (token.type === 'blockquote_close') quoteDepth--;
    else if (token.type === 'inline' && token.children) {
      token.children = tidyLinks(token.children, state.Token);
      links.push(...scanInline(token.children, i, quoteDepth > 0, env.result));
    }
  });
  const plan = planPreviews(links, state.tokens, env.result);
  state.tokens = insertPreviews(state.tokens, plan, state.Token);
}

// ---------------------------------------------------------------------------
// Rendering of our tokens (attributes in alphabetical order, like Zulip's output)

function renderMention(meta: MentionMeta): string {
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

function renderChannelLink(meta: ChannelLinkMeta): string {
  const channelPath = channelNarrowPath(meta.id, meta.name);
  if (meta.kind === 'channel') {
    return `<a class="stream" data-stream-id="${meta.id}" href="${escapeHtml(channelPath)}">${escapeHtml(`#${meta.name}`)}</a>`;
  }
  // The empty topic's path segment is empty ("/topic/", "/topic//near/5"), and Zulip shows it
  // as the empty topic's display name in <em> (Message.EMPTY_TOPIC_FALLBACK_NAME, not the topic).
  const topicPath = `${channelPath}/topic/${encodeHashComponent(meta.topic)}`;
  const topicText = meta.topic === '' ? `<em>${EMPTY_TOPIC_DISPLAY_NAME}</em>` : escapeHtml(meta.topic);
  const text = `${escapeHtml(`#${meta.name} > `)}${topicText}`;
  if (meta.kind === 'topic') {
    return `<a class="stream-topic" data-stream-id="${meta.id}" href="${escapeHtml(topicPath)}">${text}</a>`;
  }
  return `<a class="message-link" href="${escapeHtml(`${topicPath}/near/${meta.messageId}`)}">${text} @ 💬</a>`;
}

function renderEmoji(meta: EmojiMeta): string {
  // Zulip shows the name as typed, and uses it with '_' → ' ' as the title.
  const syntax = escapeHtml(`:${meta.name}:`);
  const title = escapeHtml(meta.name.replace(UNDERSCORES, ' '));
  if (meta.kind === 'realm') {
    return `<img alt="${syntax}" class="emoji" src="${escapeHtml(meta.url)}" title="${title}">`;
  }
  return `<span aria-label="${title}" class="emoji emoji-${escapeHtml(meta.code)}" role="img" title="${title}">${syntax}</span>`;
}

function renderImagePreviews(previews: ImagePreview[]): string {
  const divs = previews.map(({ url, title }) => {
    const href = escapeHtml(url);
    const titleAttr = title === undefined ? '' : ` title="${escapeHtml(title)}"`;
    return (
      `<div class="message_inline_image"><a href="${href}" rel="noopener noreferrer" target="_blank"${titleAttr}>` +
      `<img src="${href}"></a></div>`
    );
  });
  return `${divs.join('')}\n`;
}

function canonicalLanguage(lang: string): string {
  return Object.prototype.hasOwnProperty.call(CODE_LANGUAGE_NAMES, lang) ? CODE_LANGUAGE_NAMES[lang]! : lang;
}

/**
 * Zulip's code block: Pygments' `<div class="codehilite"><pre><span></span><code>`
 * wrapper (no highlighting spans here), trailing spaces and surrounding blank
 * lines removed, and data-code-language naming the language when one is given.
 */
function renderCodeBlock(content: string, lang: string | undefined): string {
  if (content === '') return '';
  const code = trimNewlines(
    content
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n'),
  );
  const langAttr = lang ? ` data-code-language="${escapeHtml(canonicalLanguage(lang))}"` : '';
  return `<div class="codehilite"${langAttr}><pre><span></span><code>${escapeCode(code)}\n</code></pre></div>\n`;
}

function fenceLanguage(info: string): string | undefined {
  return FENCE_INFO_LANG.exec(md.utils.unescapeAll(info).trim())?.[1]?.toLowerCase();
}

function renderLinkOpen(token: Token): string {
  const href = escapeHtml(token.attrGet('href') ?? '');
  const title = token.attrGet('title');
  const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
  return `<a href="${href}" rel="noopener noreferrer" target="_blank"${titleAttr}>`;
}

// ---------------------------------------------------------------------------
// The parser instance (built once)

function createParser(): MarkdownIt {
  const parser = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });
  // Zulip has no reference links, no setext headings, no ![image](syntax)
  // (it previews image links instead) and no <autolinks> (`<a@b.com>` keeps
  // its brackets around a linkified address).
  parser.disable(['reference', 'lheading', 'image', 'autolink']);
  parser.validateLink = validateLink;

  parser.inline.ruler.before('emphasis', 'zulip_mention', mentionRule);
  parser.inline.ruler.before('emphasis', 'zulip_channel_link', channelLinkRule);
  parser.inline.ruler.before('emphasis', 'zulip_underscore', underscoreRule);
  parser.block.ruler.before('fence', 'zulip_container_fence', containerFenceRule, {
    alt: ['paragraph', 'reference', 'blockquote', 'list'],
  });
  parser.core.ruler.before('text_join', 'zulip_emoji', emojiCoreRule);
  parser.core.ruler.push('zulip_finish', finishCoreRule);

  const rules = parser.renderer.rules;
  rules.zulip_mention = (tokens, idx) => renderMention(tokens[idx]!.meta as MentionMeta);
  rules.zulip_channel_link = (tokens, idx) => renderChannelLink(tokens[idx]!.meta as ChannelLinkMeta);
  rules.zulip_emoji = (tokens, idx) => renderEmoji(tokens[idx]!.meta as EmojiMeta);
  rules.zulip_image_preview = (tokens, idx) => renderImagePreviews(tokens[idx]!.meta as ImagePreview[]);
  rules.zulip_spoiler_open = () => '<div class="spoiler-block"><div class="spoiler-header">\n';
  rules.zulip_spoiler_content = () => '</div><div class="spoiler-content" aria-hidden="true">\n';
  rules.zulip_spoiler_close = () => '</div></div>\n';
  rules.fence = (tokens, idx) => renderCodeBlock(tokens[idx]!.content, fenceLanguage(tokens[idx]!.info));
  rules.code_block = (tokens, idx) => renderCodeBlock(tokens[idx]!.content, undefined);
  rules.link_open = (tokens, idx) => renderLinkOpen(tokens[idx]!);
  // Zulip renders ~~strikethrough~~ as <del>.
  rules.s_open = () => '<del>';
  rules.s_close = () => '</del>';
  return parser;
}

const md = createParser();

// ---------------------------------------------------------------------------
// Public API

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

/** Renders message content to the HTML Zulip clients expect, plus the flags the server stores. */
export function renderMessage(content: string, ctx: RenderContext): RenderResult {
  const result: RenderResult = {
    html: '',
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    streamWildcard: false,
    topicWildcard: false,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    // Zulip keeps "/me" in the HTML; clients replace it with the sender's name.
    isMeMessage: content.startsWith('/me '),
  };
  const env: RenderEnv = { ctx, result };
  const html = md.render(content, env);
  let end = html.length;
  while (end > 0 && html.charCodeAt(end - 1) === 0x0a) end--;
  result.html = html.slice(0, end);
  return result;
}
