import type { Schema } from '../contract';
import { ApiError } from '../errors';

export const MAX_TOPIC_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10000;
/** How clients show the empty topic (realm_empty_topic_display_name); sent back, it means "". */
export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';
const TRUNCATION_MARKER = '\n[message truncated]';

/**
 * A topic as Zulip stores it: trimmed; the empty topic's display name (and
 * the legacy "(no topic)") mean ""; too long is truncated to 57 characters
 * plus "...", not rejected.
 */
export function normalizeTopic(raw: string): string {
  if (raw.includes('\u0000')) throw new ApiError('Topic must not contain null bytes');
  let topic = raw.replace(/[\r\n]+/g, ' ').trim();
  if (topic === EMPTY_TOPIC_DISPLAY_NAME || topic === '(no topic)') topic = '';
  const chars = [...topic];
  if (chars.length > MAX_TOPIC_LENGTH) topic = chars.slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...';
  return topic;
}

/** Message content: trailing whitespace and leading blank lines dropped; empty or NUL refused; too long truncated. */
export function normalizeContent(raw: string): string {
  const content = raw.trimEnd().replace(/^(?:[ \t]*\n)+/, '');
  if (content.trim() === '') throw new ApiError('Message must not be empty');
  if (content.includes('\u0000')) throw new ApiError('Message must not contain null bytes');
  return truncateContent(content);
}

/** Content longer than a message may hold, cut to fit with Zulip's marker at the end. */
export function truncateContent(content: string): string {
  const chars = [...content];
  if (chars.length <= MAX_MESSAGE_LENGTH) return content;
  return chars.slice(0, MAX_MESSAGE_LENGTH - [...TRUNCATION_MARKER].length).join('') + TRUNCATION_MARKER;
}

export type TopicsPolicy = Schema<'TopicsPolicy'>;

/** The channel's policy, with `inherit` resolved to the organization's. */
export function effectiveTopicsPolicy(channelPolicy: string, realmPolicy: string): TopicsPolicy {
  return (channelPolicy === 'inherit' ? realmPolicy : channelPolicy) as TopicsPolicy;
}
