/** The core rule that turns `:name:` and Unicode emoji into emoji tokens (before text_join, so an escaped `\:smile:` stays text). */
import type MarkdownIt from 'markdown-it';
import { canonicalEmojiName, emojiCodeForName } from './emoji';
import { escapeHtml } from './html';
import { isSafeImageSource } from './links';
import type { RenderContext, RenderEnv } from './render-context';

type Token = MarkdownIt.Token;
type TokenConstructor = MarkdownIt.StateCore['Token'];
type StateCore = MarkdownIt.StateCore;

/** `:name:` — Zulip's EMOJI_REGEX is `:[\w\-\+]+:` with a Unicode \w. */
const EMOJI_NAME = String.raw`:([\p{L}\p{M}\p{N}_+\-]+):`;
/** Names a custom emoji may have (src/domain/custom-emoji.ts), each followed by a colon that is not consumed. */
export const CUSTOM_EMOJI_SCAN = /:([0-9a-z_-]+)(?=:)/g;
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

export type EmojiMeta = { kind: 'unicode'; code: string; name: string } | { kind: 'realm'; name: string; url: string };

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

export function emojiCoreRule(state: StateCore): void {
  const env = state.env as RenderEnv | undefined;
  if (!env?.ctx) return;
  for (const block of state.tokens) {
    if (block.type === 'inline' && block.children) block.children = replaceEmoji(block.children, env.ctx, state.Token);
  }
}

export function renderEmoji(meta: EmojiMeta): string {
  // Zulip shows the name as typed, and uses it with '_' → ' ' as the title.
  const syntax = escapeHtml(`:${meta.name}:`);
  const title = escapeHtml(meta.name.replace(UNDERSCORES, ' '));
  if (meta.kind === 'realm') {
    return `<img alt="${syntax}" class="emoji" src="${escapeHtml(meta.url)}" title="${title}">`;
  }
  return `<span aria-label="${title}" class="emoji emoji-${escapeHtml(meta.code)}" role="img" title="${title}">${syntax}</span>`;
}
