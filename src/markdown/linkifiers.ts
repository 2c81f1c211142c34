/**
 * The organization's linkifiers in message content (Zulip's LinkifierPattern,
 * registered after links and autolinks and before emphasis).
 *
 * A core rule over each paragraph's text tokens, after inline parsing: code
 * spans and blocks, links (Markdown links and autolinks), mentions and
 * channel links are tokens of their own, so linkifiers never run inside
 * them, as in Zulip, where those are placeholders by the time linkifiers
 * run. Linkifiers apply one after the other in their order, each to the
 * text the earlier ones left, so an earlier linkifier wins where two would
 * match overlapping text.
 *
 * Zulip's boundaries (src/domain/linkifiers.ts) are judged on the text
 * Zulip's inline processor sees: the start of the paragraph and a line
 * break count as a start, but a text token after any other token (a link,
 * a mention, an emphasis marker) does not, since Zulip sees a placeholder
 * or the marker there; so the search gets a non-boundary character in
 * front. Likewise, after a link a linkifier made, the rest of the text
 * needs a boundary character of its own.
 */
import type MarkdownIt from 'markdown-it';
import { searchLinkifier, type CompiledLinkifier } from '../domain/linkifiers';
import { validateLink } from './links';
import type { RenderEnv } from './render-context';

type Token = MarkdownIt.Token;
type StateCore = MarkdownIt.StateCore;
type TokenConstructor = StateCore['Token'];

/** Stands for whatever precedes a text token that is not at a line start: no linkifier boundary. */
const NOT_A_BOUNDARY = '\u0002';

type Segment = { text: string; atStart: boolean } | { link: string; text: string };

/** One linkifier over one text segment: text and link segments, in order. */
function applyTo(l: CompiledLinkifier, text: string, atStart: boolean): Segment[] {
  const out: Segment[] = [];
  const offset = atStart ? 0 : 1;
  const source = atStart ? text : NOT_A_BOUNDARY + text;
  let rest = 0; // where the text not yet emitted starts, in `source`
  let from = 0;
  let restAtStart = atStart;
  while (from < source.length) {
    const m = searchLinkifier(l, source, from);
    if (!m) break;
    // An empty match, or a URL Zulip's sanitize_url refuses, leaves the text as it is; the search
    // goes on after the match.
    if (m.start === m.end || !validateLink(m.url)) {
      from = m.matchEnd > from ? m.matchEnd : from + 1;
      continue;
    }
    if (m.start > rest) out.push({ text: source.slice(Math.max(rest, offset), m.start), atStart: restAtStart && rest === 0 });
    out.push({ link: m.url, text: source.slice(m.start, m.end) });
    rest = m.end;
    restAtStart = false;
    // The rest starts after a link: its first character must be a boundary of its own.
    from = m.end;
  }
  if (rest < source.length) out.push({ text: source.slice(Math.max(rest, offset)), atStart: restAtStart && rest === 0 });
  return out.filter((s) => s.text !== '' || 'link' in s);
}

/** Whether a text token at `i` starts a line: the paragraph's first token, or one after a line break. */
function startsLine(children: Token[], i: number): boolean {
  if (i === 0) return true;
  const prev = children[i - 1]!.type;
  return prev === 'softbreak' || prev === 'hardbreak';
}

function linkTokens(url: string, text: string, TokenCtor: TokenConstructor): Token[] {
  const open = new TokenCtor('link_open', 'a', 1);
  open.attrs = [['href', url]];
  open.markup = 'linkifier';
  const body = new TokenCtor('text', '', 0);
  body.content = text;
  const close = new TokenCtor('link_close', 'a', -1);
  close.markup = 'linkifier';
  return [open, body, close];
}

function linkifyChildren(children: Token[], linkifiers: readonly CompiledLinkifier[], TokenCtor: TokenConstructor): Token[] {
  const out: Token[] = [];
  let linkDepth = 0;
  children.forEach((token, i) => {
    if (token.type === 'link_open') linkDepth++;
    else if (token.type === 'link_close') linkDepth--;
    if (token.type !== 'text' || linkDepth > 0 || token.content === '') {
      out.push(token);
      return;
    }
    let segments: Segment[] = [{ text: token.content, atStart: startsLine(children, i) }];
    for (const l of linkifiers) {
      segments = segments.flatMap((s) => ('link' in s ? [s] : applyTo(l, s.text, s.atStart)));
    }
    if (segments.length === 1 && !('link' in segments[0]!)) {
      out.push(token);
      return;
    }
    for (const s of segments) {
      if ('link' in s) out.push(...linkTokens(s.link, s.text, TokenCtor));
      else {
        const text = new TokenCtor('text', '', 0);
        text.content = s.text;
        out.push(text);
      }
    }
  });
  return out;
}

export function linkifierCoreRule(state: StateCore): void {
  const linkifiers = (state.env as RenderEnv | undefined)?.ctx?.linkifiers;
  if (!linkifiers?.length) return;
  for (const token of state.tokens) {
    if (token.type === 'inline' && token.children) token.children = linkifyChildren(token.children, linkifiers, state.Token);
  }
}
