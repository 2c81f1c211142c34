import type { Schema } from '../contract';
import { parseNarrow, RESOLVED_TOPIC_PREFIX } from '../domain/narrow';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { ApiError } from '../errors';

/** A narrow term a queue can test a message event against. */
export interface EventNarrowTerm {
  operator: 'channel' | 'topic' | 'sender' | 'is';
  operand: string | number;
  negated: boolean;
}
export type EventNarrow = readonly EventNarrowTerm[];

/** Zulip's check_narrow_for_events: only these operators can filter a live stream of events. */
const SUPPORTED = new Set(['channel', 'stream', 'topic', 'sender', 'is']);
const UNSUPPORTED_IS = new Set(['followed']);

const operatorOf = (term: unknown): unknown =>
  Array.isArray(term) ? term[0] : term && typeof term === 'object' ? (term as { operator?: unknown }).operator : undefined;

export function checkNarrowForEvents(raw: unknown): EventNarrow {
  if (Array.isArray(raw)) {
    for (const term of raw) {
      const op = operatorOf(term);
      // The operator as the client wrote it, before aliases fold (Zulip's wording).
      if (typeof op === 'string' && !SUPPORTED.has(op)) throw new ApiError(`Operator ${op} not supported.`);
    }
  }
  return parseNarrow(raw).map((t) => {
    if (t.operator === 'is' && UNSUPPORTED_IS.has(String(t.operand))) throw new ApiError(`Operand ${t.operand} not supported.`);
    return { operator: t.operator as EventNarrowTerm['operator'], operand: t.operand as string | number, negated: t.negated };
  });
}

/** The empty topic matches "", its display name and the legacy "(no topic)". */
const topicKey = (t: string) => {
  const k = t.trim().toLowerCase();
  return k === EMPTY_TOPIC_DISPLAY_NAME || k === '(no topic)' ? '' : k;
};

/** The fields of a message event's message (Schema<'Message'>) that narrows test. */
type MessageLike = Partial<Pick<Schema<'Message'>, 'type' | 'stream_id' | 'display_recipient' | 'subject' | 'sender_id' | 'sender_email'>>;

/**
 * Zulip's narrow_predicate, on the shared message object (raw topic) and
 * the receiver's flags. Zulip ignores `negated`; Parley honours it, which
 * only matters to clients that send it.
 */
export function matchesNarrow(narrow: EventNarrow, message: MessageLike, flags: readonly string[]): boolean {
  return narrow.every((t) => satisfies(t, message, flags) !== t.negated);
}

function satisfies({ operator, operand }: EventNarrowTerm, m: MessageLike, flags: readonly string[]): boolean {
  const stream = m.type === 'stream';
  switch (operator) {
    case 'channel':
      if (!stream) return false;
      return typeof operand === 'number' ? m.stream_id === operand : String(m.display_recipient).toLowerCase() === operand.toLowerCase();
    case 'topic':
      return stream && topicKey(String(m.subject ?? '')) === topicKey(String(operand));
    case 'sender':
      return typeof operand === 'number' ? m.sender_id === operand : String(m.sender_email).toLowerCase() === operand.toLowerCase();
    case 'is':
      switch (operand) {
        case 'dm':
        case 'private':
          return m.type === 'private';
        case 'starred':
          return flags.includes('starred');
        case 'unread':
          return !flags.includes('read');
        case 'mentioned':
        case 'alerted':
          return flags.includes('mentioned');
        case 'resolved':
          return stream && String(m.subject ?? '').startsWith(RESOLVED_TOPIC_PREFIX);
        default:
          return true; // as Zulip: other is: operands do not filter events
      }
  }
}
