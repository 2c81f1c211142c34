import { canonicalEmojiName, emojiCharacter, emojiCodeForName, emojiNamesForCode, isEmojiCode } from './emoji';

describe('emojiCodeForName', () => {
  it.each([
    ['thumbs_up', '1f44d'],
    ['+1', '1f44d'],
    ['thumbsup', '1f44d'],
    ['tada', '1f389'],
    ['party_popper', '1f389'],
    ['smile', '1f604'],
    ['heart', '2764'],
    ['red_heart', '2764'],
    ['octopus', '1f419'],
    ['100', '1f4af'],
  ])('resolves %s to %s', (name, code) => {
    expect(emojiCodeForName(name)).toBe(code);
  });

  it('drops the U+FE0F selector and keeps leading zeros, as Zulip codes do', () => {
    expect(emojiCodeForName('hash')).toBe('0023-20e3');
    expect(emojiCodeForName('woman_shrugging')).toBe('1f937-200d-2640');
  });

  it('prefers CLDR where sets disagree (cat is the whole cat, as in Zulip)', () => {
    expect(emojiCodeForName('cat')).toBe('1f408');
    expect(emojiCodeForName('dog')).toBe('1f415');
  });

  it('does not know unknown names, upper-case spellings or bare skin tones', () => {
    expect(emojiCodeForName('not_an_emoji')).toBeUndefined();
    expect(emojiCodeForName('TADA')).toBeUndefined();
    expect(emojiCodeForName('skin-tone-2')).toBeUndefined();
    expect(emojiCodeForName('')).toBeUndefined();
  });
});

describe('canonicalEmojiName', () => {
  it('prefers the CLDR name', () => {
    expect(canonicalEmojiName('1f44d')).toBe('thumbs_up');
    expect(canonicalEmojiName('1f389')).toBe('party_popper');
    expect(canonicalEmojiName('2764')).toBe('red_heart');
  });

  it('is undefined for unknown or non-normalised codes', () => {
    expect(canonicalEmojiName('ffffff')).toBeUndefined();
    expect(canonicalEmojiName('1F44D')).toBeUndefined();
    expect(canonicalEmojiName('2764-fe0f')).toBeUndefined();
  });
});

describe('isEmojiCode', () => {
  it('accepts Zulip-style codes only', () => {
    expect(isEmojiCode('1f44d')).toBe(true);
    expect(isEmojiCode('0023-20e3')).toBe(true);
    expect(isEmojiCode('1f44d-1f3fd')).toBe(true);
    expect(isEmojiCode('2764-fe0f')).toBe(false);
    expect(isEmojiCode('1f3fb')).toBe(false);
    expect(isEmojiCode('zulip')).toBe(false);
    expect(isEmojiCode('')).toBe(false);
  });
});

describe('emojiNamesForCode', () => {
  it('lists every alias with the canonical name first', () => {
    const names = emojiNamesForCode('1f44d');
    expect(names[0]).toBe('thumbs_up');
    expect(names).toEqual(expect.arrayContaining(['+1', 'thumbsup']));
    expect(new Set(names).size).toBe(names.length);
  });

  it('returns a copy and an empty list for unknown codes', () => {
    emojiNamesForCode('1f44d').push('mutated');
    expect(emojiNamesForCode('1f44d')).not.toContain('mutated');
    expect(emojiNamesForCode('nope')).toEqual([]);
  });
});

describe('emojiCharacter', () => {
  it('gives the fully-qualified text', () => {
    expect(emojiCharacter('1f44d')).toBe('\u{1F44D}');
    expect(emojiCharacter('2764')).toBe('\u2764\uFE0F');
    expect(emojiCharacter('0023-20e3')).toBe('#\uFE0F\u20E3');
    expect(emojiCharacter('1f937-200d-2640')).toBe('\u{1F937}\u200D\u2640\uFE0F');
  });

  it('spells out unknown well-formed codes and rejects malformed ones', () => {
    expect(emojiCharacter('1f9ff-1f9ff')).toBe('\u{1F9FF}\u{1F9FF}');
    expect(emojiCharacter('xyz')).toBe('');
    expect(emojiCharacter('110000')).toBe('');
  });
});
