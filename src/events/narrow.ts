import type { Schema } from '../contract';
import { parseNarrow, RESOLVED_TOPIC_PREFIX } from '../domain/narrow';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { ApiError } from '../errors';

/**
 * A narrow term a queue can test a message event against. A channel name or
 * sender address is kept lower-cased, and a topic as its match key: folded
 * once at registration, not for every event the queue sees.
 */
export interface EventNarrowTerm {
  operator: 'channel' | 'topic' | 'sender' | 'is';
  operand: string | number;
  negated: boolean;
}

/**
 * Bounds of a queue's narrow, which it keeps for its whole life (the
 * contract's bounds, 100 terms of 25,000 characters, are for one fetch):
 * channel names and topics are at most 60 characters and addresses 254,
 * and a narrow for events takes one term per operator at most.
 */
export const MAX_EVENT_NARROW_TERMS = 10;
export const MAX_EVENT_NARROW_OPERAND = 500;
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
  const terms = parseNarrow(raw);
  if (terms.length > MAX_EVENT_NARROW_TERMS) throw new ApiError(`narrow has too many terms (limit: ${MAX_EVENT_NARROW_TERMS})`);
  return terms.map((t) => {
    const operand = t.operand as string | number;
    if (typeof operand === 'string' && operand.length > MAX_EVENT_NARROW_OPERAND) {
      throw new ApiError(`narrow operand is too long (limit: ${MAX_EVENT_NARROW_OPERAND} characters)`);
    }
    if (t.operator === 'is' && UNSUPPORTED_IS.has(String(operand))) throw new ApiError(`Operand ${operand} not supported.`);
    const operator = t.operator as EventNarrowTerm['operator'];
    return { operator, operand: matchKey(operator, operand), negated: t.negated };
  });
}

/** The empty topic matches "", its display name and the legacy "(no topic)". */
const topicKey = (t: string) => {
  const k = t.trim().toLowerCase();
  return k === EMPTY_TOPIC_DISPLAY_NAME || k === '(no topic)' ? '' : k;
};

/** An operand as events are compared with it: names and addresses ignoring case, a topic by its key. */
function matchKey(operator: EventNarrowTerm['operator'], operand: string | number): string | number {
  if (typeof operand === 'number' || operator === 'is') return operand;
  return operator === 'topic' ? topicKey(operand) : operand.toLowerCase();
}

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
      return typeof operand === 'number' ? m.stream_id === operand : String(m.display_recipient).toLowerCase() === operand;
    case 'topic':
      return stream && topicKey(String(m.subject ?? '')) === operand;
    case 'sender':
      return typeof operand === 'number' ? m.sender_id === operand : String(m.sender_email).toLowerCase() === operand;
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
