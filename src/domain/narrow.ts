import type { Schema } from '../contract';
import { ApiError } from '../errors';
import { bounded } from './bounded';

/**
 * Narrow terms as Zulip defines them (zerver/lib/narrow.py): parsed from the
 * object form `{operator, operand, negated}` or the legacy `[operator,
 * operand]`, aliases folded to one name, operands type-checked. Resolving
 * names to ids and building SQL happens in src/access/narrow.ts.
 */
export type Operand = Schema<'NarrowOperand'>;
export interface NarrowTerm {
  operator: Operator;
  operand: Operand;
  negated: boolean;
}

// A Map, not an object literal: operator names come from clients, and
// `constructor` or `__proto__` must be unknown operators, not Object's own.
const ALIASES: ReadonlyMap<string, Operator> = new Map<string, Operator>([
  ['channel', 'channel'],
  ['stream', 'channel'],
  ['channels', 'channels'],
  ['streams', 'channels'],
  ['topic', 'topic'],
  ['subject', 'topic'],
  ['sender', 'sender'],
  ['dm', 'dm'],
  ['pm-with', 'dm'],
  ['pm_with', 'dm'],
  ['dm-including', 'dm-including'],
  ['dm-with', 'dm-including'],
  ['group-pm-with', 'group-pm-with'],
  ['is', 'is'],
  ['has', 'has'],
  ['in', 'in'],
  ['id', 'id'],
  ['near', 'near'],
  ['with', 'with'],
  ['search', 'search'],
  ['mentions', 'mentions'],
]);
export type Operator =
  | 'channel'
  | 'channels'
  | 'topic'
  | 'sender'
  | 'dm'
  | 'dm-including'
  | 'group-pm-with'
  | 'is'
  | 'has'
  | 'in'
  | 'id'
  | 'near'
  | 'with'
  | 'search'
  | 'mentions';

export const IS_OPERANDS = ['dm', 'private', 'starred', 'unread', 'mentioned', 'alerted', 'resolved', 'followed', 'muted'] as const;
export const HAS_OPERANDS = ['link', 'image', 'attachment', 'reaction'] as const;

export const badNarrow = (detail: string) => new ApiError(`Invalid narrow operator: ${detail}`, 'BAD_NARROW');

/** Operators whose operand may be a user, channel or message given by id or by name/email. */
const ID_OR_STRING = new Set<Operator>(['channel', 'id', 'near', 'sender', 'group-pm-with', 'dm-including', 'with', 'mentions']);

export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ApiError('Invalid narrow');
  return raw.map(parseTerm);
}

function parseTerm(raw: unknown): NarrowTerm {
  let operator: unknown;
  let operand: unknown;
  let negated: unknown = false;
  if (Array.isArray(raw)) {
    if (raw.length !== 2) throw new ApiError('Invalid narrow');
    [operator, operand] = raw;
  } else if (raw && typeof raw === 'object') {
    ({ operator, operand, negated = false } = raw as Record<string, unknown>);
  } else {
    throw new ApiError('Invalid narrow');
  }
  if (typeof operator !== 'string') throw new ApiError('Invalid narrow');
  if (typeof negated !== 'boolean') throw new ApiError('Invalid narrow');
  const canonical = ALIASES.get(operator);
  if (!canonical) throw badNarrow(`unknown operator ${bounded(operator, 100)}`);
  if (operand === null || operand === undefined) throw new ApiError('Invalid narrow');
  return { operator: canonical, operand: checkOperand(canonical, operand), negated };
}

function checkOperand(op: Operator, operand: unknown): Operand {
  if (op === 'dm') {
    if (typeof operand === 'string') return operand;
    if (Array.isArray(operand) && operand.every((x) => Number.isInteger(x))) return operand as number[];
    throw new ApiError('Invalid narrow');
  }
  if (ID_OR_STRING.has(op)) {
    if (typeof operand === 'string' || Number.isInteger(operand)) return operand as string | number;
    throw new ApiError('Invalid narrow');
  }
  if (typeof operand !== 'string') throw new ApiError('Invalid narrow');
  if (op === 'search' && operand.trim() === '') throw new ApiError('Invalid narrow');
  return operand;
}

/** Zulip's resolved-topic prefix. */
export const RESOLVED_TOPIC_PREFIX = '✔ ';
