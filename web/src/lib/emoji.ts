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
