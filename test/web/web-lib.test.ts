import { applySuggestion, findTrigger, mentionSuggestions, personMention } from '../../web/src/lib/autocomplete';
import { withEmojiGlyphs } from '../../web/src/lib/emoji';
import { channelNarrow, dmNarrow, narrowHash, parseHash, parseSearch, searchText } from '../../web/src/lib/narrow';
import { TypingNotifier, type TypingClock } from '../../web/src/lib/typing';
import { subscriptions, topicPolicies, VISIBILITY, type Message } from '../../web/src/state/store';
import { seededRandom } from '../support/random';
import { addUnread, loadUnread, moveUnread, removeUnread, unread } from '../../web/src/state/unread';

/**
 * The web client's pure logic (web/src/lib), without a browser: Zulip's
 * narrow fragments and search syntax, the compose box's completions, the
 * typing-notice rhythm, the emoji drawn in message HTML, and the unread
 * counts kept event by event (web/src/state/unread.ts). The browser
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

describe('unread counts kept event by event', () => {
  it('agree with counting every unread message again, through sends, reads, moves and muting', () => {
    const me = 1;
    // The model: id → conversation, counted from scratch after every step.
    const model = new Map<number, { channel?: number; topic?: string; dm?: string; mention: boolean }>();
    const expected = () => {
      const muted = (c: number, t: string) => {
        const p = topicPolicies.value.get(`${c}:${t.toLowerCase()}`) ?? VISIBILITY.INHERIT;
        if (p === VISIBILITY.MUTED) return true;
        return subscriptions.value.some((s) => s.stream_id === c && s.is_muted) && p !== VISIBILITY.UNMUTED && p !== VISIBILITY.FOLLOWED;
      };
      const channels: Record<number, number> = {};
      const topics: Record<string, number> = {};
      const dms: Record<string, number> = {};
      let total = 0;
      let mentions = 0;
      for (const m of model.values()) {
        if (m.mention) mentions += 1;
        if (m.dm !== undefined) {
          dms[m.dm] = (dms[m.dm] ?? 0) + 1;
          total += 1;
          continue;
        }
        const k = `${m.channel}:${m.topic!.toLowerCase()}`;
        topics[k] = (topics[k] ?? 0) + 1;
        if (muted(m.channel!, m.topic!)) continue;
        channels[m.channel!] = (channels[m.channel!] ?? 0) + 1;
        total += 1;
      }
      return { total, mentions, channels, topics, dms };
    };
    const actual = () => {
      const u = unread.value;
      const topics: Record<string, number> = {};
      for (const [c, byTopic] of u.topics) for (const [k, t] of byTopic) topics[`${c}:${k}`] = t.count;
      return { total: u.total, mentions: u.mentions, channels: Object.fromEntries(u.channels), topics, dms: Object.fromEntries(u.dms) };
    };

    loadUnread(
      { streams: [{ stream_id: 3, topic: 'Lunch', unread_message_ids: [1, 2] }], pms: [], huddles: [], mentions: [2], count: 2 } as never,
      me,
    );
    model.set(1, { channel: 3, topic: 'Lunch', mention: false }).set(2, { channel: 3, topic: 'Lunch', mention: true });
    expect(actual()).toEqual(expected());

    // A seeded walk: sends to channels, topics and DMs, reads, moves, and muting changes.
    const rand = seededRandom(42);
    const topicNames = ['Lunch', 'lunch', 'Deploys', 'Q3'];
    for (let id = 3; id < 600; id++) {
      const step = rand(10);
      if (step < 5) {
        const mention = rand(5) === 0;
        const flags = mention ? ['mentioned'] : [];
        if (rand(4) === 0) {
          const other = 2 + rand(3);
          const m = { id, type: 'private', display_recipient: [{ id: me }, { id: other }], subject: '' } as unknown as Message;
          addUnread(m, flags, me);
          model.set(id, { dm: String(other), mention });
        } else {
          const channel = 3 + rand(3);
          const topic = topicNames[rand(topicNames.length)]!;
          addUnread({ id, type: 'stream', stream_id: channel, subject: topic } as unknown as Message, flags, me);
          model.set(id, { channel, topic, mention });
        }
      } else if (step < 8) {
        const ids = [...model.keys()].filter(() => rand(6) === 0);
        removeUnread([...ids, 10_000]);
        for (const i of ids) model.delete(i);
      } else if (step === 8) {
        const ids = [...model.keys()].filter((i) => model.get(i)!.channel !== undefined && rand(3) === 0);
        const [channel, topic] = [rand(2) ? 3 + rand(3) : undefined, rand(2) ? topicNames[rand(topicNames.length)] : undefined];
        moveUnread(ids, channel, topic);
        for (const i of ids) {
          const m = model.get(i)!;
          model.set(i, { ...m, channel: channel ?? m.channel, topic: topic ?? m.topic });
        }
      } else if (rand(2)) {
        topicPolicies.value = new Map([[`${3 + rand(3)}:${topicNames[rand(4)]!.toLowerCase()}`, rand(4)]]);
      } else {
        subscriptions.value = [{ stream_id: 3 + rand(3), is_muted: true } as never];
      }
      expect(actual()).toEqual(expected());
    }
    expect(unread.value.total).toBeGreaterThan(0);
  });
});
