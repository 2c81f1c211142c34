/**
 * Narrows: what the message list shows, as Zulip's terms (`channel`, `topic`,
 * `dm`, `is`, `search`, …) and as the URL fragment Zulip's web app uses
 * (`#narrow/channel/12-general/topic/lunch`), so links between the two read alike.
 */
export interface Term {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
}

export type Narrow = Term[];

export const COMBINED_FEED: Narrow = [];

export function narrowKey(narrow: Narrow): string {
  return JSON.stringify(narrow.map((t) => [t.negated ? `-${t.operator}` : t.operator, t.operand]));
}

export function channelNarrow(channelId: number, topic?: string): Narrow {
  const terms: Narrow = [{ operator: 'channel', operand: channelId }];
  if (topic !== undefined) terms.push({ operator: 'topic', operand: topic });
  return terms;
}

/** A conversation with these other people (the caller alone for notes to self). */
export function dmNarrow(userIds: number[]): Narrow {
  return [{ operator: 'dm', operand: [...userIds].sort((a, b) => a - b) }];
}

/** Zulip's slug for a name in a hash: spaces and what URLs dislike percent-encoded with '.' for '%'. */
function slug(text: string): string {
  return encodeURIComponent(text).replace(/\./g, '%2E').replace(/%/g, '.');
}

function unslug(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\./g, '%'));
  } catch {
    return text;
  }
}

export function narrowHash(narrow: Narrow, names: { channel(id: number): string }): string {
  if (narrow.length === 0) return '#feed';
  const parts: string[] = ['#narrow'];
  for (const t of narrow) {
    const op = t.negated ? `-${t.operator}` : t.operator;
    if (t.operator === 'channel' && typeof t.operand === 'number') {
      parts.push(op, `${t.operand}-${slug(names.channel(t.operand))}`);
    } else if (Array.isArray(t.operand)) {
      parts.push(op, t.operand.join(','));
    } else {
      parts.push(op, slug(String(t.operand)));
    }
  }
  return parts.join('/');
}

/** The narrow of a location hash, or null for one that names no narrow (settings, …). */
export function parseHash(hash: string): Narrow | null {
  const h = hash.replace(/^#/, '');
  if (h === '' || h === 'feed' || h === 'all_messages') return COMBINED_FEED;
  const parts = h.split('/');
  if (parts[0] !== 'narrow') return null;
  const terms: Narrow = [];
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const negated = parts[i].startsWith('-');
    const operator = parts[i]
      .replace(/^-/, '')
      .replace(/^stream$/, 'channel')
      .replace(/^(pm-with|dm-including)$/, (m) => (m === 'pm-with' ? 'dm' : m));
    const raw = parts[i + 1];
    let operand: Term['operand'];
    if (['channel', 'id', 'near', 'with', 'sender', 'dm-including'].includes(operator)) {
      const id = Number.parseInt(raw, 10);
      operand = Number.isNaN(id) ? unslug(raw) : id;
    } else if (operator === 'dm') {
      operand = raw
        .split('-')[0]
        .split(',')
        .map((x) => Number.parseInt(x, 10))
        .filter((x) => !Number.isNaN(x));
    } else {
      operand = unslug(raw);
    }
    terms.push(negated ? { operator, operand, negated } : { operator, operand });
  }
  return terms;
}

export interface SearchLookups {
  channelId(name: string): number | undefined;
  /** A user by email or full name, for sender:, from: and dm:. */
  userId(emailOrName: string): number | undefined;
}

/** Zulip's older names for operators, as its search box still accepts them. */
const ALIASES: Record<string, string> = { stream: 'channel', from: 'sender', 'pm-with': 'dm', subject: 'topic' };

/**
 * Zulip's search syntax (`channel:general topic:lunch sender:ana@x.org
 * is:starred -has:link words`) as terms. Quoted operands may hold spaces
 * (`topic:"team lunch"`); a minus negates; what is not an operator is
 * searched for as words. Names that match no channel or user stay text,
 * for the server to refuse with its own message.
 */
export function parseSearch(query: string, lookups: SearchLookups): Narrow {
  const terms: Narrow = [];
  const words: string[] = [];
  const re = /(-?)([a-z-]+):(?:"([^"]*)"|(\S+))|("[^"]*"|\S+)/g;
  for (let m = re.exec(query); m; m = re.exec(query)) {
    if (m[5] !== undefined) {
      words.push(m[5]);
      continue;
    }
    const negated = m[1] === '-';
    const operator = ALIASES[m[2]] ?? m[2];
    const value = m[3] ?? m[4];
    let operand: Term['operand'] = value;
    if (operator === 'channel') operand = lookups.channelId(value) ?? value;
    else if (operator === 'sender') operand = lookups.userId(value) ?? value;
    else if (operator === 'dm' || operator === 'dm-including') {
      const ids = value.split(',').map((v) => lookups.userId(v.trim()));
      operand = ids.every((id) => id !== undefined) ? (operator === 'dm' ? (ids as number[]) : (ids[0] as number)) : value;
    } else if ((operator === 'near' || operator === 'id') && /^\d+$/.test(value)) operand = Number(value);
    terms.push(negated ? { operator, operand, negated } : { operator, operand });
  }
  if (words.length) terms.push({ operator: 'search', operand: words.join(' ') });
  return terms;
}

/** A narrow back in the search box's words, the inverse of parseSearch. */
export function searchText(narrow: Narrow, names: { channel(id: number): string; userEmail(id: number): string }): string {
  return narrow
    .map((t) => {
      if (t.operator === 'search') return String(t.operand);
      let value: string;
      if (t.operator === 'channel' && typeof t.operand === 'number') value = names.channel(t.operand);
      else if (t.operator === 'sender' && typeof t.operand === 'number') value = names.userEmail(t.operand);
      else if (Array.isArray(t.operand)) value = t.operand.map((id) => names.userEmail(id)).join(',');
      else value = String(t.operand);
      const quoted = /\s/.test(value) || value === '' ? `"${value}"` : value;
      return `${t.negated ? '-' : ''}${t.operator}:${quoted}`;
    })
    .join(' ');
}

export function termOf(narrow: Narrow, operator: string): Term | undefined {
  return narrow.find((t) => t.operator === operator && !t.negated);
}

/** Whether a narrow is a search rather than a place a link leads to (a channel, topic, conversation or view). */
export function isSearch(n: Narrow): boolean {
  // near: only says where to open, so a topic near a message is still that topic;
  // is:starred, is:mentioned and is:dm are the sidebar's views.
  return n.some(
    (t) =>
      t.negated ||
      !['channel', 'topic', 'dm', 'is', 'near'].includes(t.operator) ||
      (t.operator === 'is' && !['starred', 'mentioned', 'dm'].includes(String(t.operand))),
  );
}
