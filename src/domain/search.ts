/**
 * The words full-text search matches on, one rule for indexing a message and
 * for reading a query, so both databases find exactly the same messages
 * (ADR 0013).
 *
 * A word is a run of letters, digits and underscores (what the highlighter
 * in src/serializers/highlight.ts marks), compared without case and without
 * diacritics ("Café" is found by "cafe", as Zulip's PostgreSQL search finds
 * it). A query word matches every indexed word it begins ("deploy" finds
 * "deployment").
 */

/** Indexed words are cut to this many characters; a longer query word is cut the same way. */
export const MAX_SEARCH_TERM_LENGTH = 64;

/** Most distinct words a search operand contributes (the same bound the narrow has always had). */
export const MAX_SEARCH_WORDS = 20;

/** Lower-cased, compatibility-decomposed, combining marks removed. */
export function foldForSearch(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** Distinct indexed words of a text, in order of first appearance. */
export function searchTerms(text: string): string[] {
  const out = new Set<string>();
  for (const word of foldForSearch(text).split(/[^\p{L}\p{N}_]+/u)) {
    if (word.length === 0) continue;
    out.add(cutSearchWord(word));
  }
  return [...out];
}

/** The indexed words of a message: its topic's and its content's. */
export function messageSearchTerms(topic: string, content: string): string[] {
  return [...new Set([...searchTerms(topic), ...searchTerms(content)])];
}

/**
 * The half-open range of indexed words a query word begins: [word, bound).
 * U+10FFFF sorts after every character on both databases (binary order of
 * code points), so every word that starts with `word` is below the bound.
 */
export function prefixRange(word: string): [string, string] {
  return [word, `${word}\u{10FFFF}`];
}

/** A word cut to MAX_SEARCH_TERM_LENGTH code points (never inside a surrogate pair). */
export function cutSearchWord(word: string): string {
  if (word.length <= MAX_SEARCH_TERM_LENGTH) return word;
  return [...word].slice(0, MAX_SEARCH_TERM_LENGTH).join('');
}
