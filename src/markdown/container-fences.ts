/** The block rule for ```quote and ```spoiler fences (other fences are code blocks: ./code-blocks.ts). */
import type MarkdownIt from 'markdown-it';

type StateBlock = MarkdownIt.StateBlock;

/** Zulip's FENCE_RE: fence, then optional `{.lang header}`. */
const FENCE_LINE = /^(`{3,}|~{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+\-./#]+)[ ]*([^ ~`][^~`]*)?\}?)?$/;
const FENCE_START = /^(?:`{3,}|~{3,})/;
const QUOTE_LANGS = new Set(['quote', 'quoted']);
const SPOILER_LANG = 'spoiler';

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

export function containerFenceRule(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
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

/** The HTML around a spoiler's header and its content, as Zulip writes it. */
export const SPOILER_HTML = {
  open: '<div class="spoiler-block"><div class="spoiler-header">\n',
  content: '</div><div class="spoiler-content" aria-hidden="true">\n',
  close: '</div></div>\n',
};
