/**
 * Search highlighting as Zulip shows it: every occurrence of a search word
 * (as a word prefix, case-insensitively) wrapped in <span class="highlight">,
 * in text only — never inside a tag or an attribute.
 */
export function highlightHtml(html: string, words: string[]): string {
  const re = wordsRegex(words);
  if (!re) return html;
  return html.replace(/(<[^>]*>)|([^<]+)/g, (_m, tag: string | undefined, text: string | undefined) =>
    tag !== undefined ? tag : text!.replace(re, '<span class="highlight">$1</span>'),
  );
}

/** The topic, HTML-escaped, with the same highlighting. */
export function highlightText(text: string, words: string[]): string {
  return highlightHtml(escapeHtml(text), words);
}

function wordsRegex(words: string[]): RegExp | null {
  const parts = [...new Set(words)].filter(Boolean).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (parts.length === 0) return null;
  return new RegExp(`(?<![\\p{L}\\p{N}_])((?:${parts.join('|')})[\\p{L}\\p{N}_]*)`, 'giu');
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}
