/**
 * Search highlighting as Zulip shows it: every occurrence of a search word
 * (as a word prefix, case-insensitively) wrapped in <span class="highlight">,
 * in text only — never inside a tag or an attribute.
 */
export function highlightHtml(html: string, words: string[]): string {
  const re = wordsRegex(words);
  if (!re) return html;
  // Tags and character references (&amp; &quot; &#39;) pass through whole; only text between them is searched.
  return html.replace(/(<[^>]*>|&#?\w+;)|([^<&]+|&)/g, (_m, skip: string | undefined, text: string | undefined) =>
    skip !== undefined ? skip : text!.replace(re, '<span class="highlight">$1</span>'),
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
