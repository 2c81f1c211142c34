/**
 * Unicode emoji names and codes, from the `emojibase-data` package.
 *
 * Zulip identifies a Unicode emoji by its `emoji_code`: the code points in
 * lower-case hex joined by '-', without the U+FE0F variation selector
 * (👍 → "1f44d", ❤️ → "2764", #️⃣ → "0023-20e3"). Names are shortcodes such as
 * "thumbs_up", "+1" or "tada". We accept every alias from several shortcode
 * sets, so whatever name a client types or sends resolves.
 *
 * The JSON is large, so it is loaded on first use and the maps are built once.
 */
import fs from 'node:fs';

interface CompactEmoji {
  hexcode: string;
  unicode: string;
  skins?: CompactEmoji[];
}

type ShortcodeSet = Record<string, string | string[]>;

/**
 * Shortcode sets in priority order. When two sets give the same name to
 * different emoji (e.g. iamcal's "cat" is 🐱 while CLDR's is 🐈), the earlier
 * set wins. CLDR first also matches Zulip where they agree on a name
 * (Zulip renders :cat: as 1f408 and :dog: as 1f415).
 */
const SHORTCODE_SETS = ['cldr', 'emojibase', 'iamcal', 'github', 'joypixels'] as const;

/**
 * The bare skin-tone modifiers. Zulip refuses to render them as emoji on
 * their own (`:skin-tone-2:` stays text), so they get no names here.
 */
const BANNED_CODES = new Set(['1f3fb', '1f3fc', '1f3fd', '1f3fe', '1f3ff']);

interface EmojiData {
  nameToCode: Map<string, string>;
  codeToNames: Map<string, string[]>;
  codeToChar: Map<string, string>;
}

let data: EmojiData | undefined;

/** emojibase hexcode ("2764-FE0F-200D-1F525") → Zulip emoji_code ("2764-200d-1f525"). */
function hexcodeToEmojiCode(hexcode: string): string {
  return hexcode
    .split('-')
    .filter((part) => part !== 'FE0F' && part !== 'fe0f')
    .join('-')
    .toLowerCase();
}

/**
 * emojibase writes U+FE0F even after characters that are emoji by default
 * ("👍\uFE0F"); Unicode's fully-qualified form drops it there, so we do too.
 */
const REDUNDANT_VS16 = /(\p{Emoji_Presentation})\uFE0F/gu;

/**
 * One of emojibase-data's tables, parsed on first use rather than at import
 * (they are megabytes of JSON most CLI commands never need), and read from
 * the file rather than required: `require` would keep the parsed tables in
 * its module cache for the life of the process (about 2 MiB of heap), where
 * only the maps built from them are needed.
 */
function readTable<T>(name: string): T {
  return JSON.parse(fs.readFileSync(require.resolve(`emojibase-data/en/${name}.json`), 'utf8')) as T;
}

function loadCharacters(codeToChar: Map<string, string>): void {
  const compact = readTable<CompactEmoji[]>('compact');
  const add = (emoji: CompactEmoji): void => {
    const code = hexcodeToEmojiCode(emoji.hexcode);
    if (!codeToChar.has(code)) codeToChar.set(code, emoji.unicode.replace(REDUNDANT_VS16, '$1'));
  };
  for (const emoji of compact) {
    add(emoji);
    for (const skin of emoji.skins ?? []) add(skin);
  }
}

function loadNames(nameToCode: Map<string, string>, codeToNames: Map<string, string[]>): void {
  for (const setName of SHORTCODE_SETS) {
    const set = readTable<ShortcodeSet>(`shortcodes/${setName}`);
    for (const [hexcode, value] of Object.entries(set)) {
      const code = hexcodeToEmojiCode(hexcode);
      if (BANNED_CODES.has(code)) continue;
      const names = codeToNames.get(code) ?? [];
      for (const name of typeof value === 'string' ? [value] : value) {
        if (!nameToCode.has(name)) nameToCode.set(name, code);
        if (!names.includes(name)) names.push(name);
      }
      codeToNames.set(code, names);
    }
  }
}

function emojiData(): EmojiData {
  if (data === undefined) {
    const built: EmojiData = { nameToCode: new Map(), codeToNames: new Map(), codeToChar: new Map() };
    loadCharacters(built.codeToChar);
    loadNames(built.nameToCode, built.codeToNames);
    data = built;
  }
  return data;
}

/** The emoji_code for a name from any shortcode set ("tada", "party_popper" → "1f389"). */
export function emojiCodeForName(name: string): string | undefined {
  return emojiData().nameToCode.get(name);
}

/**
 * The preferred name for an emoji_code: the CLDR shortcode when there is one
 * ("1f44d" → "thumbs_up"), otherwise the first alias of the next set.
 */
export function canonicalEmojiName(code: string): string | undefined {
  return emojiData().codeToNames.get(code)?.[0];
}

/** Whether `code` is a known Unicode emoji_code with at least one name. */
export function isEmojiCode(code: string): boolean {
  return emojiData().codeToNames.has(code);
}

/** Every name for an emoji_code, canonical name first; empty when unknown. */
export function emojiNamesForCode(code: string): string[] {
  return [...(emojiData().codeToNames.get(code) ?? [])];
}

/**
 * Every Unicode emoji code the server accepts with its names, canonical name
 * first: the `code_to_names` of the emoji data document
 * (server_emoji_data_url).
 */
export function emojiCodeToNames(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [code, names] of emojiData().codeToNames) out[code] = [...names];
  return out;
}

const HEX_PART = /^[0-9a-f]{1,6}$/;

/**
 * The Unicode text for an emoji_code, fully qualified (with U+FE0F where the
 * emoji needs it) when the code is known. Unknown but well-formed codes are
 * spelled out from their code points; malformed ones give "".
 */
export function emojiCharacter(code: string): string {
  const known = emojiData().codeToChar.get(code);
  if (known !== undefined) return known;
  const parts = code.toLowerCase().split('-');
  if (!parts.every((part) => HEX_PART.test(part))) return '';
  const points = parts.map((part) => parseInt(part, 16));
  if (points.some((point) => point > 0x10ffff)) return '';
  return String.fromCodePoint(...points);
}
