/** A Unicode emoji's code (`1f44d`, `1f469-200d-1f4bb`) as its characters; custom emoji by name. */
export function emojiGlyph(code: string, type: string, name: string): string {
  if (type !== 'unicode_emoji') return `:${name}:`;
  try {
    return String.fromCodePoint(...code.split('-').map((c) => Number.parseInt(c, 16)));
  } catch {
    return `:${name}:`;
  }
}

/** The emoji a reaction picker offers first, by Zulip's names. */
export const COMMON_EMOJI: readonly { name: string; code: string }[] = [
  { name: '+1', code: '1f44d' },
  { name: 'tada', code: '1f389' },
  { name: 'smile', code: '1f604' },
  { name: 'heart', code: '2764' },
  { name: 'working_on_it', code: '1f6e0' },
  { name: 'octopus', code: '1f419' },
];

/**
 * The server renders a Unicode emoji as a span holding its `:name:` text,
 * for a client's sprite sheet to draw over (Zulip's web app does). Parley's
 * client draws the character itself instead, keeping the span and its label.
 */
const EMOJI_SPAN = /(<span aria-label="[^"]*" class="emoji emoji-([0-9a-f]+(?:-[0-9a-f]+)*)" role="img" title="[^"]*">):[^<:]+:(<\/span>)/g;

export function withEmojiGlyphs(html: string): string {
  if (!html.includes('class="emoji emoji-')) return html;
  return html.replace(
    EMOJI_SPAN,
    (_all, open: string, code: string, close: string) => `${open}${emojiGlyph(code, 'unicode_emoji', code)}${close}`,
  );
}
