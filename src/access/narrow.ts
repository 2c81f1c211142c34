import { VisibilityPolicy } from '../domain/user-topics';
import type { Knex } from 'knex';
import { flagMask } from '../domain/flags';
import { bounded } from '../domain/bounded';
import { badNarrow, NarrowTerm } from '../domain/narrow';
import { dmGroupHash } from '../domain/dm';
import { isGuestRole } from '../domain/roles';
import { normalizeTopic } from '../domain/topics';
import { ApiError } from '../errors';
import {
  ChannelRow,
  getChannelById,
  getChannelByName,
  getMutedChannelRecipientIds,
  getPublicChannelRecipientIds,
} from '../queries/channels';
import { getDmGroupByHash, getDmParticipants, getMessageRow, hasUserMessage } from '../queries/messages';
import {
  type Filter,
  listDmRecipientIdsOfUser,
  type SearchWord,
  listWebPublicChannelRecipientIds,
  type NarrowQuery,
} from '../queries/narrow';
import { listSearchTermsWithPrefix } from '../queries/search-index';
import { getUserByApiEmail, getUserInRealm, listUsersByApiEmails, listUsersByIds } from '../queries/users';
import { cutSearchWord, MAX_SEARCH_WORDS, searchTerms } from '../domain/search';
import { canReadChannelHistory, Viewer } from './viewer';
import { RecipientType } from '../domain/recipients';
import type { UserRow } from '../queries/rows';

/**
 * Turns parsed narrow terms into a NarrowQuery: names resolved to ids, and
 * the mode chosen as Zulip chooses it (zerver/lib/narrow.py): a non-negated
 * channel term for a channel whose history the viewer may read, or
 * channels:public, reads channel history; any `is:` term but is:resolved
 * keeps the search to the viewer's own messages.
 */
export async function resolveNarrow(
  db: Knex,
  viewer: Viewer,
  rawTerms: NarrowTerm[],
  channels: ChannelFinder = (realmId, to) => (typeof to === 'number' ? getChannelById(db, realmId, to) : getChannelByName(db, realmId, to)),
): Promise<{ query: NarrowQuery; searchWords: string[] }> {
  const terms = await applyWith(db, viewer, rawTerms);
  const filters: Filter[] = [];
  let historyRecipients: number[] | null = null;
  let historyAllowed = true;
  let hasChannel = false;
  let hasDm = false;
  const searchWords: string[] = [];
  const realmId = viewer.user.realm_id;

  for (const t of terms) {
    const { negated } = t;
    switch (t.operator) {
      case 'channel': {
        const channel = await findChannel(channels, realmId, t.operand);
        if (!channel) throw badNarrow(`unknown channel ${t.operand}`);
        filters.push({ kind: 'recipient', ids: [channel.recipient_id], negated });
        if (!negated) {
          hasChannel = true;
          if (canReadChannelHistory(viewer, channel)) historyRecipients = intersect(historyRecipients, [channel.recipient_id]);
        }
        break;
      }
      case 'channels': {
        if (t.operand !== 'public' && t.operand !== 'web-public')
          throw badNarrow(`unknown channels operand ${bounded(String(t.operand), 100)}`);
        // Guests see only the public channels they are subscribed to.
        const candidates =
          t.operand === 'public' ? await getPublicChannelRecipientIds(db, realmId) : await listWebPublicChannelRecipientIds(db, realmId);
        const ids = isGuestRole(viewer.user.role) ? candidates.filter((r) => viewer.subscribedRecipients.has(r)) : candidates;
        filters.push({ kind: 'recipient', ids, negated });
        if (!negated) {
          hasChannel = true;
          historyRecipients = intersect(historyRecipients, ids);
        }
        break;
      }
      case 'topic':
        filters.push({ kind: 'topic', key: normalizeTopic(String(t.operand)).toLowerCase(), negated });
        break;
      case 'sender': {
        const user = await findUser(db, realmId, t.operand);
        if (!user) throw badNarrow(`unknown user ${t.operand}`);
        filters.push({ kind: 'sender', id: user.id, negated });
        break;
      }
      case 'dm': {
        if (!negated) hasDm = true;
        const ids = await resolveUserList(db, realmId, t.operand);
        const recipient = await dmRecipient(db, [...ids, viewer.user.id]);
        // A conversation that never happened matches nothing (and its negation everything).
        if (recipient !== undefined) filters.push({ kind: 'recipient', ids: [recipient], negated });
        else if (!negated) filters.push({ kind: 'nothing' });
        break;
      }
      case 'dm-including':
      case 'group-pm-with': {
        if (!negated) hasDm = true;
        const user = await findUser(db, realmId, t.operand);
        if (!user) throw badNarrow(`unknown user ${t.operand}`);
        const ids = await listDmRecipientIdsOfUser(db, user.id, { groupsOnly: t.operator === 'group-pm-with' });
        filters.push({ kind: 'recipient', ids, negated });
        if (!negated) filters.push({ kind: 'flag', column: 'is_private', negated: false });
        break;
      }
      case 'is':
        historyAllowed = historyAllowed && t.operand === 'resolved';
        filters.push(await isFilter(db, viewer, String(t.operand), negated));
        if ((t.operand === 'dm' || t.operand === 'private') && !negated) hasDm = true;
        break;
      case 'has': {
        const column = HAS_COLUMNS.get(String(t.operand));
        if (column) filters.push({ kind: 'has', column, negated });
        else if (t.operand === 'reaction') filters.push({ kind: 'reaction', negated });
        else throw badNarrow(`unknown 'has' operand ${bounded(String(t.operand), 100)}`);
        break;
      }
      case 'in': {
        if (t.operand === 'home') {
          // Everything not muted: muted channels less their unmuted and followed topics, and muted topics, are left out.
          const muted = await getMutedChannelRecipientIds(db, viewer.user.id);
          filters.push({ kind: 'muted', viewerId: viewer.user.id, mutedRecipients: muted, negated: !negated });
        } else if (t.operand !== 'all') {
          throw badNarrow(`unknown 'in' operand ${bounded(String(t.operand), 100)}`);
        }
        break;
      }
      case 'id': {
        const id = Number(t.operand);
        if (!Number.isInteger(id)) throw new ApiError('Invalid message ID', 'BAD_NARROW');
        filters.push({ kind: 'id', id, negated });
        break;
      }
      case 'near':
      case 'with':
        break; // near only guides the client's anchor; with was applied above
      case 'search': {
        const operand = String(t.operand);
        if (!negated) searchWords.push(...searchTokens(operand));
        filters.push(await searchFilter(db, operand, negated));
        break;
      }
      case 'mentions': {
        const user = await findUser(db, realmId, t.operand);
        if (!user) throw badNarrow(`unknown user ${t.operand}`);
        // Only the viewer's own mention flags are known to the server per viewer.
        if (user.id !== viewer.user.id) throw badNarrow('mentions is supported only for yourself');
        filters.push({ kind: 'flagmask', mask: flagMask('mentioned'), negated });
        historyAllowed = false;
        break;
      }
      default: {
        // parseNarrow admits only known operators; a term that reached here
        // unhandled must fail, never be skipped (that would widen the narrow).
        const unhandled: never = t.operator;
        throw badNarrow(`unknown operator ${String(unhandled)}`);
      }
    }
  }
  if (hasChannel && hasDm) throw badNarrow('No message can be both a channel message and direct message');
  return {
    query: {
      viewerId: viewer.user.id,
      historyRecipients: historyAllowed ? historyRecipients : null,
      filters,
    },
    searchWords,
  };
}

// A Map: operands come from clients (`has:constructor` must be unknown).
const HAS_COLUMNS: ReadonlyMap<string, 'has_link' | 'has_image' | 'has_attachment'> = new Map([
  ['link', 'has_link'],
  ['image', 'has_image'],
  ['attachment', 'has_attachment'],
] as const);

async function isFilter(db: Knex, viewer: Viewer, operand: string, negated: boolean): Promise<Filter> {
  switch (operand) {
    case 'dm':
    case 'private':
      return { kind: 'flag', column: 'is_private', negated };
    case 'starred':
      return { kind: 'flag', column: 'is_starred', negated };
    case 'unread':
      return { kind: 'flag', column: 'is_unread', negated };
    case 'mentioned':
      return { kind: 'flag', column: 'is_mentioned', negated };
    case 'alerted':
      return { kind: 'flagmask', mask: flagMask('has_alert_word'), negated };
    case 'resolved':
      return { kind: 'resolved', negated };
    case 'muted': {
      // Muted channels, less their unmuted and followed topics, and muted topics.
      const muted = await getMutedChannelRecipientIds(db, viewer.user.id);
      return { kind: 'muted', viewerId: viewer.user.id, mutedRecipients: muted, negated };
    }
    case 'followed':
      return { kind: 'topicPolicy', viewerId: viewer.user.id, policy: VisibilityPolicy.FOLLOWED, negated };
    default:
      throw badNarrow(`unknown 'is' operand ${bounded(operand, 100)}`);
  }
}

/**
 * `with:<message id>`: the narrow becomes the conversation that now holds
 * that message (its channel and topic, or its DM). Ignored when the message
 * is missing or inaccessible and other terms already name a conversation.
 */
async function applyWith(db: Knex, viewer: Viewer, terms: NarrowTerm[]): Promise<NarrowTerm[]> {
  const withTerm = terms.find((t) => t.operator === 'with');
  if (!withTerm) return terms;
  const id = Number(withTerm.operand);
  const message = Number.isInteger(id) ? await getMessageRow(db, id) : undefined;
  const accessible = message && message.realm_id === viewer.user.realm_id && (await viewerCanSee(db, viewer, message));
  const conversationTerms = new Set(['channel', 'topic', 'dm']);
  if (!message || !accessible) {
    if (terms.some((t) => conversationTerms.has(t.operator) && !t.negated)) return terms.filter((t) => t !== withTerm);
    throw new ApiError("Invalid 'with' operator", 'BAD_NARROW');
  }
  const rest = terms.filter((t) => t !== withTerm && !(conversationTerms.has(t.operator) && !t.negated));
  if (message.recipient_type === RecipientType.CHANNEL) {
    return [
      { operator: 'channel', operand: message.recipient_type_id, negated: false },
      { operator: 'topic', operand: message.topic, negated: false },
      ...rest,
    ];
  }
  const participants = (await getDmParticipants(db, [message.recipient_id])).get(message.recipient_id) ?? [];
  return [{ operator: 'dm', operand: participants.filter((p) => p !== viewer.user.id), negated: false }, ...rest];
}

async function viewerCanSee(db: Knex, viewer: Viewer, m: { id: number; recipient_type: number; recipient_type_id: number }) {
  if (await hasUserMessage(db, viewer.user.id, m.id)) return true;
  if (m.recipient_type !== RecipientType.CHANNEL) return false;
  const channel = await getChannelById(db, viewer.user.realm_id, m.recipient_type_id);
  return channel !== undefined && canReadChannelHistory(viewer, channel);
}

/** A channel of the organization by id, or by name case-insensitively (the channel cache, or SQL). */
export type ChannelFinder = (realmId: number, to: number | string) => Promise<ChannelRow | undefined>;

async function findChannel(channels: ChannelFinder, realmId: number, operand: string | number | number[]): Promise<ChannelRow | undefined> {
  if (typeof operand === 'number') return channels(realmId, operand);
  if (typeof operand !== 'string') return undefined;
  // A name made of digits that names no channel is taken as an id (Zulip accepts both).
  return (await channels(realmId, operand)) ?? (/^\d+$/.test(operand) ? channels(realmId, Number(operand)) : undefined);
}

async function findUser(db: Knex, realmId: number, operand: string | number | number[]) {
  if (typeof operand === 'number') return getUserInRealm(db, realmId, operand);
  if (typeof operand !== 'string') return undefined;
  if (/^\d+$/.test(operand)) return getUserInRealm(db, realmId, Number(operand));
  return getUserByApiEmail(db, realmId, operand);
}

/** A dm operand: user ids, or emails separated by commas. */
async function resolveUserList(db: Knex, realmId: number, operand: string | number | number[]): Promise<number[]> {
  const items = Array.isArray(operand)
    ? operand
    : typeof operand === 'number'
      ? [operand]
      : operand
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  // The contract bounds a list operand; an email string gets the same bound.
  if (items.length > MAX_DM_OPERAND_USERS) throw badNarrow(`too many users (limit: ${MAX_DM_OPERAND_USERS})`);
  // Two batched reads, whatever the count (one per item let a 100-term narrow of 1,000
  // repeated ids cost 100,000 statements).
  const isId = (item: string | number) => typeof item === 'number' || /^\d+$/.test(item);
  const byId = new Map((await listUsersByIds(db, realmId, items.filter(isId).map(Number))).map((u) => [u.id, u] as const));
  const emails = items.filter((item) => !isId(item)).map(String);
  const byEmail = emails.length ? await listUsersByApiEmails(db, realmId, emails) : new Map<string, UserRow>();
  return items.map((item) => {
    const user = isId(item) ? byId.get(Number(item)) : byEmail.get(String(item));
    if (!user) throw badNarrow(`unknown user ${item}`);
    return user.id;
  });
}

/** A direct message conversation has at most this many other participants. */
const MAX_DM_OPERAND_USERS = 1000;

async function dmRecipient(db: Knex, userIds: number[]): Promise<number | undefined> {
  return (await getDmGroupByHash(db, dmGroupHash(userIds)))?.recipient_id ?? undefined;
}

function intersect(current: number[] | null, ids: number[]): number[] {
  if (current === null) return ids;
  const set = new Set(ids);
  return current.filter((id) => set.has(id));
}

/** A search word that begins more indexed words than this reads them as a range (ADR 0013). */
const MAX_TERMS_PER_WORD = 50;

/** The search filter of an operand: its folded words, each with the indexed words it begins. */
async function searchFilter(db: Knex, operand: string, negated: boolean): Promise<Filter> {
  const words: SearchWord[] = [];
  for (const prefix of searchTerms(operand).slice(0, MAX_SEARCH_WORDS))
    words.push({ prefix, terms: await listSearchTermsWithPrefix(db, prefix, MAX_TERMS_PER_WORD) });
  return { kind: 'search', words, negated };
}

/**
 * Words of a search operand as the highlighter marks them (matching uses src/domain/search.ts),
 * cut as matching cuts them: a word becomes part of a regular expression, and one of 20,000
 * characters overflowed V8's stack compiling it (a 500). The message it matched begins with the
 * cut word, so highlighting words that begin with it marks the same ones.
 */
export function searchTokens(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w.length > 0)
    .slice(0, MAX_SEARCH_WORDS)
    .map(cutSearchWord);
}
