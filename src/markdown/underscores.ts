import type MarkdownIt from 'markdown-it';

type StateInline = MarkdownIt.StateInline;

/**
 * Zulip disables `_` for emphasis and strong (`_foo_` and `__init__` stay as
 * typed), so a run of underscores is plain text.
 */
export function underscoreRule(state: StateInline, silent: boolean): boolean {
  let end = state.pos;
  while (end < state.posMax && state.src.charCodeAt(end) === 0x5f /* _ */) end++;
  if (end === state.pos) return false;
  if (!silent) state.pending += state.src.slice(state.pos, end);
  state.pos = end;
  return true;
}
