/** UserMessage flag bits, at Zulip's positions (mask = 1 << bit). */
export const FLAG_BITS = {
  read: 0,
  starred: 1,
  collapsed: 2,
  mentioned: 3,
  stream_wildcard_mentioned: 4,
  topic_wildcard_mentioned: 5,
  group_mentioned: 6,
  force_expand: 7,
  force_collapse: 8,
  has_alert_word: 9,
  historical: 10,
  is_private: 11,
  active_mobile_push_notification: 12,
} as const;
export type FlagName = keyof typeof FLAG_BITS;

export const flagMask = (name: FlagName) => 2 ** FLAG_BITS[name];

/** Flags a user may set through POST /messages/flags. */
export const EDITABLE_FLAGS: readonly FlagName[] = ['read', 'starred', 'collapsed'];
/** Internal bookkeeping flags that never appear on the wire. */
const NON_API_FLAGS = new Set<FlagName>(['is_private', 'active_mobile_push_notification']);

/** The lists seen so far by bitfield: a page of messages has a handful of distinct values. */
const apiFlagLists = new Map<number, readonly string[]>();

/** The flag list of a message object. `wildcard_mentioned` is the deprecated union of the two wildcard flags. */
export function flagsToApi(flags: number): string[] {
  let list = apiFlagLists.get(flags);
  if (!list) {
    list = computeApiFlags(flags);
    // Bounded: only the bits above exist, so there are at most 2^13 values.
    if (apiFlagLists.size < 8192) apiFlagLists.set(flags, list);
  }
  return [...list];
}

function computeApiFlags(flags: number): string[] {
  const out: string[] = [];
  for (const [name, bit] of Object.entries(FLAG_BITS) as Array<[FlagName, number]>) {
    if (NON_API_FLAGS.has(name)) continue;
    if (Math.floor(flags / 2 ** bit) % 2 === 1) out.push(name);
  }
  if (out.includes('stream_wildcard_mentioned') || out.includes('topic_wildcard_mentioned')) {
    out.push('wildcard_mentioned');
  }
  return out;
}
