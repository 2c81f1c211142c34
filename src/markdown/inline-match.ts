import type MarkdownIt from 'markdown-it';

type StateInline = MarkdownIt.StateInline;

// Zulip only starts a mention or channel link at the start of the text or
// after whitespace or one of ' " ( { [ / < (BEFORE_MENTION_ALLOWED_REGEX in
// zerver/lib/mention.py), so "email@**x**" is not a mention.
const BEFORE_MENTION_CHAR = /[\s'"({[/<]/;
export const BEFORE_MENTION = String.raw`(?<![^\s'"({[/<])`;

/** Whether a mention or channel link may start at `pos` (see BEFORE_MENTION). */
export function mayStartMention(src: string, pos: number): boolean {
  return pos === 0 || BEFORE_MENTION_CHAR.test(src.charAt(pos - 1));
}

/** Matches a sticky regex at `pos` without running past the inline range. */
export function matchAt(re: RegExp, state: StateInline): RegExpExecArray | null {
  re.lastIndex = state.pos;
  const m = re.exec(state.src);
  return m && m.index + m[0].length <= state.posMax ? m : null;
}
