/**
 * What the compose box offers as the user types, as Zulip's web app does:
 * `@` people, groups and wildcards; `#` channels, then `>` a channel's
 * topics; `:` emoji. Pure functions over plain data, so they can be tested
 * without a page: find what is being typed at the caret, rank the
 * candidates, and splice the chosen one's Markdown into the text.
 */

export type Trigger =
  | { kind: 'mention'; start: number; query: string; silent: boolean }
  | { kind: 'channel'; start: number; query: string }
  | { kind: 'topic'; start: number; channel: string; query: string }
  | { kind: 'emoji'; start: number; query: string };

/** One suggestion: what the list shows, and the text that replaces the typed token. */
export interface Suggestion {
  key: string;
  label: string;
  detail?: string;
  /** A glyph or picture shown before the label (an emoji). */
  glyph?: { text?: string; src?: string };
  insert: string;
}

/** Characters after which a token may start: the text's start, white space or an opening bracket or quote. */
const BOUNDARY = String.raw`(?:^|[\s(\[{"'])`;
const MAX_QUERY = 40;

/**
 * The token being typed just before the caret, if it is one to complete.
 * A `#` or `@` followed by a space is Markdown (a heading) or prose, and an
 * emoji needs two characters after its colon (Zulip's rule, so that times
 * and URLs such as `10:30` or `http:` do not open the list).
 */
export function findTrigger(text: string, caret: number): Trigger | null {
  const before = text.slice(Math.max(0, caret - 200), caret);
  const offset = caret - before.length;
  let m = /#\*\*([^*\n>]+?)(?:\*\*)? ?>([^*\n>]*)$/.exec(before);
  if (m && m[2].length <= MAX_QUERY) return { kind: 'topic', start: offset + m.index, channel: m[1], query: m[2] };
  m = new RegExp(`${BOUNDARY}(@(_?)(?:\\*\\*?)?)([^\\s@*#:][^\\n@*#]*|)$`).exec(before);
  if (m && m[3].length <= MAX_QUERY) {
    return { kind: 'mention', start: offset + before.length - m[1].length - m[3].length, query: m[3], silent: m[2] === '_' };
  }
  m = new RegExp(`${BOUNDARY}(#(?:\\*\\*)?)([^\\s#*>][^\\n#*>]*|)$`).exec(before);
  if (m && m[2].length <= MAX_QUERY) {
    return { kind: 'channel', start: offset + before.length - m[1].length - m[2].length, query: m[2] };
  }
  m = new RegExp(`${BOUNDARY}:([\\w+-]{2,})$`).exec(before);
  if (m && m[1].length <= MAX_QUERY) return { kind: 'emoji', start: offset + before.length - m[1].length - 1, query: m[1] };
  return null;
}

/**
 * How well a name matches what was typed: 0 when it starts with it, 1 when
 * one of its words does (words split on spaces, `_`, `-`, `.`), 2 when it
 * holds it elsewhere; null for no match. Case is ignored.
 */
export function matchRank(name: string, query: string): number | null {
  const n = name.toLowerCase();
  const q = query.toLowerCase().trim();
  if (q === '' || n.startsWith(q)) return 0;
  if (n.split(/[\s_.-]+/).some((w) => w.startsWith(q))) return 1;
  if (n.includes(q)) return 2;
  return null;
}

/** The candidates that match, best first (then alphabetically), at most `limit`. */
export function rank<T>(items: Iterable<T>, query: string, names: (t: T) => string[], limit: number): T[] {
  const scored: { item: T; score: number; name: string }[] = [];
  for (const item of items) {
    let best: number | null = null;
    for (const name of names(item)) {
      const r = matchRank(name, query);
      if (r !== null && (best === null || r < best)) best = r;
    }
    if (best !== null) scored.push({ item, score: best, name: names(item)[0] ?? '' });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((s) => s.item);
}

export interface PersonLike {
  user_id: number;
  full_name: string;
  email: string;
  is_active?: boolean;
}

export interface GroupLike {
  id: number;
  name: string;
  description: string;
  is_system_group: boolean;
  deactivated?: boolean;
}

/**
 * Zulip's mention of a person: `@**Full Name**`, or `@**Full Name|id**`
 * when another active user has the same name (the server could not tell
 * them apart); `@_**…**` for a silent mention, which notifies no one.
 */
export function personMention(user: PersonLike, everyone: Iterable<PersonLike>, silent: boolean): string {
  const name = user.full_name.toLowerCase();
  let twins = 0;
  for (const u of everyone) if (u.is_active !== false && u.full_name.toLowerCase() === name) twins += 1;
  const inner = twins > 1 ? `${user.full_name}|${user.user_id}` : user.full_name;
  return `@${silent ? '_' : ''}**${inner}**`;
}

/**
 * The wildcard mentions Zulip offers: the whole channel (`all`,
 * `everyone`, `channel`) and the topic's participants (`topic`); in a
 * direct message only the first two mean anything. Silent mentions of a
 * wildcard notify no one, so they are not offered.
 */
export function wildcards(inChannel: boolean): { name: string; detail: string }[] {
  const all = [
    { name: 'all', detail: inChannel ? 'Notify channel' : 'Notify recipients' },
    { name: 'everyone', detail: inChannel ? 'Notify channel' : 'Notify recipients' },
  ];
  if (!inChannel) return all;
  return [...all, { name: 'channel', detail: 'Notify channel' }, { name: 'topic', detail: 'Notify topic' }];
}

const LIMIT = 8;

export function mentionSuggestions(
  query: string,
  silent: boolean,
  people: readonly PersonLike[],
  groups: readonly GroupLike[],
  inChannel: boolean,
): Suggestion[] {
  const active = people.filter((u) => u.is_active !== false);
  const out: Suggestion[] = [];
  for (const u of rank(active, query, (u) => [u.full_name, u.email], LIMIT)) {
    out.push({ key: `u:${u.user_id}`, label: u.full_name, detail: u.email, insert: `${personMention(u, active, silent)} ` });
  }
  const mentionable = groups.filter((g) => !g.is_system_group && !g.deactivated);
  for (const g of rank(mentionable, query, (g) => [g.name], LIMIT)) {
    out.push({ key: `g:${g.id}`, label: g.name, detail: g.description || 'User group', insert: `@${silent ? '_' : ''}*${g.name}* ` });
  }
  if (!silent) {
    for (const w of rank(wildcards(inChannel), query, (w) => [w.name], LIMIT)) {
      out.push({ key: `w:${w.name}`, label: w.name, detail: w.detail, insert: `@**${w.name}** ` });
    }
  }
  // Best match first; among equals people, then groups, then wildcards.
  return out
    .map((s, i) => ({ s, i, score: matchRank(s.label, query) ?? 3 }))
    .sort((a, b) => a.score - b.score || a.i - b.i)
    .slice(0, LIMIT)
    .map((x) => x.s);
}

/**
 * A channel link. It ends at the closing `**` with no space, so that
 * typing `>` straight after it goes on to the channel's topics.
 */
export function channelSuggestions(query: string, channels: readonly { stream_id: number; name: string }[]): Suggestion[] {
  return rank(channels, query, (c) => [c.name], LIMIT).map((c) => ({
    key: `c:${c.stream_id}`,
    label: c.name,
    insert: `#**${c.name}**`,
  }));
}

export function topicSuggestions(query: string, channel: string, topics: readonly string[]): Suggestion[] {
  return rank(topics, query, (t) => [t], LIMIT).map((t) => ({ key: `t:${t}`, label: t, insert: `#**${channel}>${t}** ` }));
}

export interface EmojiLike {
  name: string;
  /** A Unicode glyph, or the image of a custom emoji. */
  text?: string;
  src?: string;
}

export function emojiSuggestions(query: string, emoji: readonly EmojiLike[]): Suggestion[] {
  return rank(emoji, query, (e) => [e.name], LIMIT).map((e) => ({
    key: `e:${e.name}`,
    label: e.name,
    glyph: { text: e.text, src: e.src },
    insert: `:${e.name}: `,
  }));
}

/** The text with the typed token (from `start` to the caret) replaced, and where the caret goes. */
export function applySuggestion(text: string, start: number, caret: number, insert: string): { text: string; caret: number } {
  const after = text.slice(caret);
  // A space typed already after the caret is not doubled.
  const ins = insert.endsWith(' ') && after.startsWith(' ') ? insert.slice(0, -1) : insert;
  return { text: text.slice(0, start) + ins + after, caret: start + ins.length };
}
