import type { Schema } from '../contract';

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

export const isFlagName = (name: string): name is FlagName => Object.hasOwn(FLAG_BITS, name);

/** Flags a user may set through POST /messages/flags. */
export const EDITABLE_FLAGS = ['read', 'starred', 'collapsed'] as const satisfies readonly FlagName[];
export type EditableFlag = (typeof EDITABLE_FLAGS)[number];
export const isEditableFlag = (name: string): name is EditableFlag => (EDITABLE_FLAGS as readonly string[]).includes(name);

/** A flag as clients see it (the contract's MessageFlag). */
export type ApiFlag = Schema<'MessageFlag'>;

/**
 * The bits that appear on the wire, in FLAG_BITS order. Left out:
 * is_private and active_mobile_push_notification (bookkeeping), and
 * force_expand / force_collapse, which nothing in Parley sets and the
 * contract's MessageFlag does not list.
 */
const API_FLAGS = [
  'read',
  'starred',
  'collapsed',
  'mentioned',
  'stream_wildcard_mentioned',
  'topic_wildcard_mentioned',
  'group_mentioned',
  'has_alert_word',
  'historical',
] as const satisfies ReadonlyArray<FlagName & ApiFlag>;

/** The lists seen so far by bitfield: a page of messages has a handful of distinct values. */
const apiFlagLists = new Map<number, readonly ApiFlag[]>();

/** The flag list of a message object. `wildcard_mentioned` is the deprecated union of the two wildcard flags. */
export function flagsToApi(flags: number): ApiFlag[] {
  let list = apiFlagLists.get(flags);
  if (!list) {
    list = computeApiFlags(flags);
    // Bounded: only the bits above exist, so there are at most 2^13 values.
    if (apiFlagLists.size < 8192) apiFlagLists.set(flags, list);
  }
  return [...list];
}

function computeApiFlags(flags: number): ApiFlag[] {
  const out: ApiFlag[] = [];
  for (const name of API_FLAGS) {
    if (Math.floor(flags / 2 ** FLAG_BITS[name]) % 2 === 1) out.push(name);
  }
  if (out.includes('stream_wildcard_mentioned') || out.includes('topic_wildcard_mentioned')) {
    out.push('wildcard_mentioned');
  }
  return out;
}
