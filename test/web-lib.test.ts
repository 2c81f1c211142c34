import { applySuggestion, findTrigger, mentionSuggestions, personMention } from '../web/src/lib/autocomplete';
import { withEmojiGlyphs } from '../web/src/lib/emoji';
import { channelNarrow, dmNarrow, narrowHash, parseHash, parseSearch, searchText } from '../web/src/lib/narrow';
import { TypingNotifier, type TypingClock } from '../web/src/lib/typing';

/**
 * The web client's pure logic (web/src/lib), without a browser: Zulip's
 * narrow fragments and search syntax, the compose box's completions, the
 * typing-notice rhythm and the emoji drawn in message HTML. The browser
 * suites (test/web-client*.test.ts) cover the same through the page.
 */
const names = { channel: (id: number) => ({ 3: 'general', 4: 'team lunch' })[id] ?? `c${id}` };
const lookups = {
  channelId: (name: string) => ({ general: 3, 'team lunch': 4 })[name.toLowerCase()],
  userId: (who: string) => ({ 'max@example.com': 11, 'mia@example.com': 12, 'max member': 11 })[who.toLowerCase()],
};

describe('narrows in the URL fragment', () => {
  it("reads and writes Zulip's #narrow form, names slugged with their IDs", () => {
    const hash = narrowHash(channelNarrow(4, 'lunch: 12.30'), names);
    expect(hash).toBe('#narrow/channel/4-team.20lunch/topic/lunch.3A.2012.2E30');
    expect(parseHash(hash)).toEqual(channelNarrow(4, 'lunch: 12.30'));
    expect(parseHash('#narrow/dm/12,11-group')).toEqual([{ operator: 'dm', operand: [12, 11] }]);
    expect(narrowHash(dmNarrow([12, 11]), names)).toBe('#narrow/dm/11,12');
    // Zulip's older operator names still open.
    expect(parseHash('#narrow/stream/3-general')).toEqual([{ operator: 'channel', operand: 3 }]);
    expect(parseHash('')).toEqual([]);
    expect(parseHash('#settings')).toBeNull();
  });

  it("parses Zulip's search syntax: operators, quotes, negation, names to IDs, words", () => {
    expect(parseSearch('channel:general topic:"team lunch" -is:starred from:max@example.com pizza time', lookups)).toEqual([
      { operator: 'channel', operand: 3 },
      { operator: 'topic', operand: 'team lunch' },
      { operator: 'is', operand: 'starred', negated: true },
      { operator: 'sender', operand: 11 },
      { operator: 'search', operand: 'pizza time' },
    ]);
    expect(parseSearch('dm:max@example.com,mia@example.com', lookups)).toEqual([{ operator: 'dm', operand: [11, 12] }]);
    // A name that matches nothing stays text, for the server's own refusal.
    expect(parseSearch('channel:nowhere', lookups)).toEqual([{ operator: 'channel', operand: 'nowhere' }]);
    const narrow = parseSearch('channel:general is:mentioned lunch', lookups);
    expect(parseSearch(searchText(narrow, { channel: names.channel, userEmail: () => 'x' }), lookups)).toEqual(narrow);
  });
});

describe('compose completions', () => {
  it('finds the token at the caret, but not times, URLs or headings', () => {
    expect(findTrigger('hi @ma', 6)).toMatchObject({ kind: 'mention', query: 'ma', silent: false });
    expect(findTrigger('hi @_ma', 7)).toMatchObject({ kind: 'mention', query: 'ma', silent: true });
    expect(findTrigger('see #gen', 8)).toMatchObject({ kind: 'channel', query: 'gen' });
    expect(findTrigger('see #**general**>lu', 19)).toMatchObject({ kind: 'topic', channel: 'general', query: 'lu' });
    expect(findTrigger('yay :tad', 8)).toMatchObject({ kind: 'emoji', query: 'tad' });
    expect(findTrigger('at 10:30', 8)).toBeNull();
    expect(findTrigger('# heading', 9)).toBeNull();
  });

  it('mentions a person by name, with the ID when two share it; a chosen suggestion replaces the token', () => {
    const people = [
      { user_id: 11, full_name: 'Max Member', email: 'max@example.com' },
      { user_id: 13, full_name: 'Mia Member', email: 'mia@example.com' },
      { user_id: 14, full_name: 'Mia Member', email: 'mia2@example.com' },
    ];
    expect(personMention(people[0], people, false)).toBe('@**Max Member**');
    expect(personMention(people[2], people, true)).toBe('@_**Mia Member|14**');
    const found = mentionSuggestions('ma', false, people, [], true);
    expect(found[0]).toMatchObject({ label: 'Max Member', insert: '@**Max Member** ' });
    expect(applySuggestion('hi @ma there', 3, 6, '@**Max Member** ')).toEqual({ text: 'hi @**Max Member** there', caret: 18 });
  });
});

describe('typing notices', () => {
  it('starts on the first keystroke, renews every 10 s while typing, stops after 5 s idle or on another conversation', () => {
    let now = 0;
    const timers: { at: number; run: () => void }[] = [];
    const clock: TypingClock = {
      now: () => now,
      setTimeout: (run, ms) => {
        const t = { at: now + ms, run };
        timers.push(t);
        return t;
      },
      clearTimeout: (h) => timers.splice(timers.indexOf(h as (typeof timers)[number]), 1),
    };
    const sent: string[] = [];
    const n = new TypingNotifier<string>(
      (op, to) => sent.push(`${op} ${to}`),
      () => ({ startedWaitMs: 10_000, stoppedWaitMs: 5_000 }),
      clock,
    );
    n.typed('a', 'topic A', false);
    now = 4_000;
    n.typed('a', 'topic A', false);
    now = 10_000;
    n.typed('a', 'topic A', false);
    expect(sent).toEqual(['start topic A', 'start topic A']);
    n.typed('b', 'topic B', false);
    expect(sent.slice(2)).toEqual(['stop topic A', 'start topic B']);
    now = 15_000;
    for (const t of timers.filter((x) => x.at <= now)) t.run();
    expect(sent.slice(4)).toEqual(['stop topic B']);
  });
});

describe('emoji in message HTML', () => {
  it("draws the server's :name: spans as characters, keeping their label", () => {
    const html = '<p><span aria-label="wave" class="emoji emoji-1f44b" role="img" title="wave">:wave:</span> hi</p>';
    expect(withEmojiGlyphs(html)).toBe(
      '<p><span aria-label="wave" class="emoji emoji-1f44b" role="img" title="wave">\u{1f44b}</span> hi</p>',
    );
    expect(withEmojiGlyphs('<p>:wave:</p>')).toBe('<p>:wave:</p>');
  });
});
