import type { Knex } from 'knex';
import type { Data, Params, Reply, Schema } from '../contract';
import { parseNarrow } from '../domain/narrow';
import { ApiError, IncompatibleParametersError, MissingArgumentError } from '../errors';
import { fetchNarrowByIds, fetchNarrowRange, findFirstAtOrAfter, findFirstUnread, NarrowQuery, NarrowRow } from '../queries/narrow';
import { searchHighlighter } from '../serializers/highlight';
import { topicForClient } from '../serializers/messages';
import { encodePage, type PageSources, renderPage } from './message-dicts';
import type { EncodedJson } from '../serializers/encoded-json';
import { accessMessage } from './messages';
import { resolveNarrow } from './narrow';
import type { Caller, Viewer } from './viewer';

/** Zulip's limit per request. */
export const MAX_MESSAGES_PER_FETCH = 5000;
/** The anchor of `newest`: larger than any message id (Zulip's LARGER_THAN_MAX_MESSAGE_ID). */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

/**
 * GET /messages: a keyset page around an anchor (LIMIT n+1 on each side, no
 * OFFSET), or an explicit id list; then one batch of lookups and the
 * serializer. The number of queries does not depend on the page size.
 */
export async function getMessages(
  db: Knex,
  sources: PageSources,
  viewer: Caller,
  p: Params<'get-messages'>,
  sent: ReadonlySet<string>,
): Promise<Reply<'get-messages'>> {
  if (sent.has('client_gravatar') && sent.has('client_avatar_service')) {
    throw new ApiError("Can't decide between 'client_avatar_service' and 'client_gravatar' arguments", 'REQUEST_CONFUSING_VAR', 400, {
      var_name1: 'client_avatar_service',
      var_name2: 'client_gravatar',
    });
  }
  const view = {
    viewer: viewer.user,
    applyMarkdown: p.apply_markdown ?? true,
    // The validator fills in client_gravatar's default: the name the client sent decides.
    clientGravatar: (sent.has('client_avatar_service') ? p.client_avatar_service : p.client_gravatar) ?? true,
    allowEmptyTopicName: p.allow_empty_topic_name ?? false,
  };
  const { query, searchWords } = await resolveNarrow(db, viewer, parseNarrow(p.narrow), sources.channels);
  // With the cache, the page query reads ids and flags, and only the
  // messages the cache misses are read; without it, the page query returns
  // the rows themselves.
  if (!sources.dicts) query.withMessages = true;

  if (sent.has('message_ids')) {
    const conflicting = ['anchor', 'include_anchor', 'num_after', 'num_before', 'use_first_unread_anchor'].filter((k) => sent.has(k));
    if (conflicting.length) throw new IncompatibleParametersError([...conflicting, 'message_ids']);
    const rows = await fetchNarrowByIds(db, query, p.message_ids ?? []);
    const messages = await serialize(db, sources, viewer, rows, view, searchWords);
    return { found_anchor: false, found_oldest: false, found_newest: false, history_limited: false, messages };
  }

  if (!sent.has('num_before')) throw new MissingArgumentError('num_before');
  if (!sent.has('num_after')) throw new MissingArgumentError('num_after');
  const numBefore = p.num_before ?? 0;
  const numAfter = p.num_after ?? 0;
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) {
    throw new ApiError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  }
  const includeAnchor = p.include_anchor ?? true;
  if (!includeAnchor && numBefore > 0 && numAfter > 0) {
    throw new ApiError('The anchor can only be excluded at an end of the range');
  }
  const anchor = await resolveAnchor(db, query, p, sent);
  const page = await fetchAround(db, query, anchor, numBefore, numAfter, includeAnchor);
  const messages = await serialize(db, sources, viewer, page.rows, view, searchWords);
  return {
    anchor,
    found_anchor: page.foundAnchor,
    found_oldest: page.foundOldest,
    found_newest: page.foundNewest,
    history_limited: false,
    messages,
  };
}

/** GET /messages/{message_id}: one message the viewer may read, with its Markdown. */
export async function getMessage(db: Knex, sources: PageSources, viewer: Caller, p: Params<'get-message'>): Promise<Data<'get-message'>> {
  const { row, flags } = await accessMessage(db, viewer, p.message_id);
  const [{ message }] = await renderPage(db, sources, viewer, [{ id: row.id, flags, row }], {
    viewer: viewer.user,
    applyMarkdown: p.apply_markdown ?? true,
    clientGravatar: false,
    allowEmptyTopicName: p.allow_empty_topic_name ?? false,
  });
  return { message, raw_content: row.content };
}

export async function resolveAnchor(
  db: Knex,
  query: NarrowQuery,
  p: Pick<Params<'get-messages'>, 'anchor' | 'anchor_date' | 'use_first_unread_anchor'>,
  sent: ReadonlySet<string>,
): Promise<number> {
  // The contract sends anchor as text (a message ID in digits, or a keyword).
  // use_first_unread_anchor wins over an anchor sent beside it: Zulip's server
  // reads it first and ignores the anchor (its documentation calls the two
  // exclusive), and zulip-terminal's first request sends both.
  const raw = p.use_first_unread_anchor ? 'first_unread' : sent.has('anchor') ? p.anchor : undefined;
  if (raw === undefined) throw new MissingArgumentError('anchor');
  switch (raw) {
    case 'newest':
      return LARGER_THAN_MAX_MESSAGE_ID;
    case 'oldest':
      return 0;
    case 'first_unread':
      return (await findFirstUnread(db, query)) ?? LARGER_THAN_MAX_MESSAGE_ID;
    case 'date': {
      if (!p.anchor_date) throw new MissingArgumentError('anchor_date');
      const ts = parseAnchorDate(p.anchor_date);
      return (await findFirstAtOrAfter(db, query, ts)) ?? LARGER_THAN_MAX_MESSAGE_ID;
    }
    default:
      // Zulip clamps an integer anchor to [0, LARGER_THAN_MAX_MESSAGE_ID]; text
      // of any length is compared as digits, never through a float that
      // could round or overflow to Infinity.
      if (/^-\d+$/.test(raw)) return 0;
      if (/^\d+$/.test(raw)) {
        const digits = raw.replace(/^0+(?=\d)/, '');
        return digits.length > 16 ? LARGER_THAN_MAX_MESSAGE_ID : Math.min(Number(digits), LARGER_THAN_MAX_MESSAGE_ID);
      }
      throw new ApiError('Invalid anchor');
  }
}

/** ISO 8601 date or date-time; a date alone is midnight UTC, and no zone means UTC. */
export function parseAnchorDate(raw: string): number {
  const s = raw.trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(s);
  if (!m) throw new ApiError('Invalid anchor_date');
  const [, y, mo, d, h = '00', mi = '00', sec = '00', zone] = m;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${sec}${zone ? (zone === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone) : 'Z'}`;
  const ms = Date.parse(iso);
  // Date.parse rolls impossible days over (2024-02-30 → March 1st); refuse them instead.
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (
    Number.isNaN(ms) ||
    day.getUTCMonth() !== Number(mo) - 1 ||
    day.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(sec) > 59
  ) {
    throw new ApiError('Invalid anchor_date');
  }
  return Math.floor(ms / 1000);
}

interface Page {
  rows: NarrowRow[];
  foundAnchor: boolean;
  foundOldest: boolean;
  foundNewest: boolean;
}

/**
 * Zulip's range semantics (limit_query_to_range + post_process_limited_query):
 * anchor 0 is anchored to the left (oldest), LARGER_THAN_MAX to the right
 * (newest); a side that must also carry the anchor row asks for one more
 * row, and found_oldest / found_newest come from a short page, without
 * counting.
 */
export async function fetchAround(
  db: Knex,
  q: NarrowQuery,
  anchor: number,
  numBefore: number,
  numAfter: number,
  includeAnchor: boolean,
): Promise<Page> {
  const anchoredLeft = anchor === 0;
  const anchoredRight = anchor === LARGER_THAN_MAX_MESSAGE_ID;
  const needBefore = !anchoredLeft && numBefore > 0;
  const needAfter = !anchoredRight && numAfter > 0;
  let before: NarrowRow[] = [];
  let after: NarrowRow[] = [];
  if (needBefore && needAfter) {
    [before, after] = await Promise.all([
      fetchNarrowRange(db, q, '<=', anchor - 1, numBefore),
      fetchNarrowRange(db, q, '>=', anchor, numAfter + 1),
    ]);
  } else if (needBefore) {
    const limit = numBefore + (anchoredRight ? 0 : 1);
    before = await fetchNarrowRange(db, q, '<=', includeAnchor ? anchor : anchor - 1, limit);
  } else if (needAfter) {
    after = await fetchNarrowRange(db, q, '>=', includeAnchor ? anchor : anchor + 1, numAfter + 1);
  } else {
    // Nothing on either side: at most the anchor itself (an `id` lookup, as Zulip does).
    after = await fetchNarrowByIds(db, q, [anchor]);
  }
  const all = [...before.reverse(), ...after];
  let beforeRows: NarrowRow[];
  let anchorRows: NarrowRow[] = [];
  let afterRows: NarrowRow[];
  if (anchoredRight) {
    beforeRows = all;
    afterRows = [];
  } else if (anchoredLeft) {
    beforeRows = [];
    afterRows = all;
  } else {
    beforeRows = all.filter((r) => r.id < anchor);
    anchorRows = all.filter((r) => r.id === anchor);
    afterRows = all.filter((r) => r.id > anchor);
  }
  const foundAnchor = anchorRows.length === 1;
  const foundOldest = anchoredLeft || beforeRows.length < numBefore;
  const foundNewest = anchoredRight || afterRows.length < numAfter;
  beforeRows = numBefore > 0 ? beforeRows.slice(-numBefore) : [];
  afterRows = numAfter > 0 ? afterRows.slice(0, numAfter) : [];
  return { rows: [...beforeRows, ...anchorRows, ...afterRows], foundAnchor, foundOldest, foundNewest };
}

async function serialize(
  db: Knex,
  sources: PageSources,
  viewer: Caller,
  page: NarrowRow[],
  view: { viewer: Viewer['user']; applyMarkdown: boolean; clientGravatar: boolean; allowEmptyTopicName: boolean },
  searchWords: string[],
): Promise<EncodedJson<Array<Schema<'Message'>>>> {
  const highlight = searchWords.length ? searchHighlighter(searchWords) : null;
  return encodePage(
    db,
    sources,
    viewer,
    page.map((r) => ({ id: r.id, flags: r.flags, row: r.message })),
    view,
    highlight
      ? (dict) => ({
          match_content: highlight.html(dict.rendered_content),
          match_subject: highlight.text(topicForClient(dict.topic, view.allowEmptyTopicName)),
        })
      : undefined,
  );
}
