import type { ChangeObject } from 'diff';

/** The diff library, loaded when a history is first asked for rather than at every start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const diffLibrary = () => require('diff') as typeof import('diff');

/** Tokens (words and tags) that may differ before the diff gives up looking for common ones. */
const MAX_EDIT_LENGTH = 400;

/**
 * content_html_diff of GET /messages/{id}/history: the newer rendering with
 * what changed marked, word by word, in Zulip's classes —
 * <span class="highlight_text_inserted"> around words the edit added and
 * <span class="highlight_text_deleted"> around words it removed, the
 * insertion first where one replaces the other, all inside one <div>.
 *
 * Both inputs are our own rendered HTML, already escaped, so text passes
 * through as it is (never escaped twice). The result stays well formed by
 * construction: every tag of the newer rendering appears once, in order, and
 * no tag of the older one does; a highlight span holds text only, so it is
 * closed before any tag and never straddles one. Markup-only changes (a
 * paragraph split into lines) therefore show no deletion. If either input is
 * not the well-formed HTML the renderer makes, the newer rendering is
 * returned unmarked rather than risk broken markup.
 */
export function htmlDiff(before: string, after: string): string {
  // Leading whitespace is not a difference; the newer rendering's is kept as it is.
  const lead = /^\s*/.exec(after)![0];
  const oldTokens = tokenize(before.trimStart());
  const newTokens = tokenize(after.slice(lead.length));
  if (!oldTokens || !newTokens) return `<div>${wellFormed(after) ? after : ''}</div>`;
  // Past MAX_EDIT_LENGTH changed tokens the search costs far more than it tells (two renderings
  // of 1,600 different words take seconds): the whole text is then shown as replaced.
  const changes: Array<ChangeObject<Token[]>> = diffLibrary().diffArrays(oldTokens, newTokens, {
    comparator: (a, b) => a.kind === b.kind && a.text === b.text,
    maxEditLength: MAX_EDIT_LENGTH,
  }) ?? [
    { value: oldTokens, count: oldTokens.length, added: false, removed: true },
    { value: newTokens, count: newTokens.length, added: true, removed: false },
  ];

  let out = lead;
  for (let i = 0; i < changes.length; i++) {
    const change = changes[i]!;
    const next = changes[i + 1];
    if (change.removed && next?.added) {
      // A replacement: Zulip shows the new words before the old ones.
      out += inserted(next.value);
      out += deleted(change.value, out);
      i++;
    } else if (change.added) out += inserted(change.value);
    else if (change.removed) out += deleted(change.value, out);
    else out += change.value.map((t) => t.text + t.trail).join('');
  }
  out = `<div>${out}</div>`;
  return wellFormed(out) ? out : `<div>${wellFormed(after) ? after : ''}</div>`;
}

interface Token {
  kind: 'tag' | 'word';
  /** The tag as written, or a word (a run of non-space text, entities whole). */
  text: string;
  /** The whitespace after it: kept in the output, ignored when comparing. */
  trail: string;
}

const TAG = /^<\/?[A-Za-z][^\s/>]*(?:\s+[^\s"'=<>`/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*\s*\/?>/;

/** Tags and words, or null when the text is not markup a tag reader can follow. */
function tokenize(html: string): Token[] | null {
  const tokens: Token[] = [];
  let i = /^\s*/.exec(html)![0].length;
  while (i < html.length) {
    let text: string;
    let kind: Token['kind'];
    if (html[i] === '<') {
      const m = TAG.exec(html.slice(i));
      if (!m) return null;
      text = m[0];
      kind = 'tag';
    } else {
      const m = /^[^\s<]+/.exec(html.slice(i))!;
      text = m[0];
      kind = 'word';
      if (text.includes('>')) return null;
    }
    i += text.length;
    const ws = /^\s*/.exec(html.slice(i))![0];
    i += ws.length;
    tokens.push({ kind, text, trail: ws });
  }
  return tokens;
}

const INSERTED = '<span class="highlight_text_inserted">';
const DELETED = '<span class="highlight_text_deleted">';

/** Added tokens: their words highlighted in runs, their tags kept bare between the runs. */
function inserted(tokens: Token[]): string {
  let out = '';
  let run: Token[] = [];
  const flush = () => {
    if (run.length === 0) return;
    out += INSERTED + joinWords(run) + '</span>' + run[run.length - 1]!.trail;
    run = [];
  };
  for (const t of tokens) {
    if (t.kind === 'tag') {
      flush();
      out += t.text + t.trail;
    } else run.push(t);
  }
  flush();
  return out;
}

/** Removed tokens: their words only, in one highlight (their tags belong to the old markup). */
function deleted(tokens: Token[], before: string): string {
  const words = tokens.filter((t) => t.kind === 'word');
  if (words.length === 0) return '';
  // Keep the removed words apart from the word (or the inserted run) the output ends with.
  const gap = before === '' || /\s$/.test(before) || (before.endsWith('>') && !before.endsWith('</span>')) ? '' : ' ';
  // The space after the run: the last word's, or that of the tag closing it.
  return gap + DELETED + joinWords(words) + '</span>' + tokens[tokens.length - 1]!.trail;
}

/** Words with the whitespace between them; the last one's trailing space goes after the span. */
function joinWords(words: Token[]): string {
  return words.map((w, i) => w.text + (i < words.length - 1 ? w.trail || ' ' : '')).join('');
}

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

/** Every tag readable and every element closed in order (void elements need no end tag). */
function wellFormed(html: string): boolean {
  const tokens = tokenize(html);
  if (!tokens) return false;
  const open: string[] = [];
  for (const t of tokens) {
    if (t.kind !== 'tag') continue;
    const tag = t.text;
    const name = /^<\/?([A-Za-z][^\s/>]*)/.exec(tag)![1]!.toLowerCase();
    if (tag.startsWith('</')) {
      if (open.pop() !== name) return false;
    } else if (!VOID.has(name) && !tag.endsWith('/>')) open.push(name);
  }
  return open.length === 0;
}
