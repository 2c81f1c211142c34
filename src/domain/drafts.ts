import { ApiError } from '../errors';
import { MAX_TOPIC_LENGTH } from './topics';

/** Zulip's MAX_DRAFTS_IN_REGISTER_RESPONSE: POST /register lists at most this many, the newest. */
export const MAX_DRAFTS_IN_REGISTER = 1000;

/** Drafts one POST /drafts may create (a Parley limit; Zulip sets none beyond the request's size). */
export const MAX_DRAFTS_PER_REQUEST = 1000;

/** The latest timestamp a draft may carry (the end of year 9999, the last date Zulip can store). */
export const MAX_DRAFT_TIMESTAMP = 253402300799;

export type DraftType = '' | 'stream' | 'private';

/**
 * A channel draft's topic as Zulip keeps it: not trimmed, not mapped to
 * the empty topic, only cut to 60 characters (57 and "...") when longer.
 */
export function draftTopic(raw: string): string {
  const chars = [...raw];
  const topic = chars.length > MAX_TOPIC_LENGTH ? chars.slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...' : raw;
  if (topic.includes('\u0000')) throw new ApiError('Topic must not contain null bytes');
  return topic;
}

/**
 * The draft's last edit time in microseconds: the client's timestamp
 * (seconds, an integer or not) rounded to six decimals, or now. Zulip
 * refuses a negative one.
 */
export function draftEditTime(timestamp: number | undefined, nowMs: number): number {
  const micros = Math.round((timestamp ?? nowMs / 1000) * 1e6);
  if (micros < 0) throw new ApiError('Timestamp must not be negative.');
  return micros;
}

/** Whole seconds, as Zulip's Draft.to_dict shows the edit time. */
export const draftTimestampSeconds = (micros: number): number => Math.floor(micros / 1e6);
