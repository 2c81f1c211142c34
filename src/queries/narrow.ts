import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { RecipientType } from '../domain/recipients';
import { SparseFlag, sparseFlag } from '../domain/sparse-flags';
import { inChunks } from './ids';
import { SEARCH_TABLE } from './search-index';
import { prefixRange } from '../domain/search';
import { MessageRow, selectMessageColumns, toMessageRow } from './messages';
import { getUnreadHorizon, READ, sideRowsAtOrBelow } from './unread';

type Q = Knex | Knex.Transaction;

/**
 * A search word, folded (src/domain/search.ts), with the indexed words it
 * begins (`listSearchTermsWithPrefix`); null when they are too many to list.
 */
export interface SearchWord {
  prefix: string;
  terms: string[] | null;
}

/** One condition of a narrow, already resolved to ids (src/access/narrow.ts). */
export type Filter =
  | { kind: 'recipient'; ids: number[]; negated: boolean }
  | { kind: 'topic'; key: string; negated: boolean }
  | { kind: 'sender'; id: number; negated: boolean }
  | { kind: 'flag'; column: 'is_unread' | 'is_starred' | 'is_mentioned' | 'is_private'; negated: boolean }
  | { kind: 'flagmask'; mask: number; negated: boolean }
  | { kind: 'has'; column: 'has_link' | 'has_image' | 'has_attachment'; negated: boolean }
  | { kind: 'reaction'; negated: boolean }
  | { kind: 'id'; id: number; negated: boolean }
  | { kind: 'resolved'; negated: boolean }
  | { kind: 'search'; words: SearchWord[]; negated: boolean }
  /** Muted for the viewer: a muted channel's message unless its topic is unmuted or followed, or a muted topic's (Zulip's exclude_muting_conditions). */
  | { kind: 'muted'; viewerId: number; mutedRecipients: number[]; negated: boolean }
  /** In a topic for which the viewer has this policy (is:followed). */
  | { kind: 'topicPolicy'; viewerId: number; policy: number; negated: boolean }
  | { kind: 'nothing' };

/**
 * A narrow ready to run. Personal mode reads the viewer's user_messages
 * (index (user_id, message_id)) or, for is:starred, is:mentioned and is:dm,
 * that flag's side table, or for is:unread the rows above the viewer's
 * unread horizon and the unread side rows below it; history mode reads
 * messages of channels whose history the viewer may read (index
 * (recipient_id, topic_key, id)), with the viewer's row joined when present.
 */
export interface NarrowQuery {
  viewerId: number;
  /** null: personal mode. Otherwise the channel recipients history mode may read (all of the viewer's realm). */
  historyRecipients: number[] | null;
  filters: Filter[];
  /**
   * Page queries also return each message's row (GET /messages without the
   * message cache), saving a second round trip. Otherwise they return ids and
   * the viewer's flags only, which the indexes hold (channel names come from
   * the channel cache).
   */
  withMessages?: boolean;
  /**
   * The viewer's unread horizon, read once per request by the first query
   * that splits at it (a page, its other side, first_unread) and shared by
   * the rest. A horizon only rises, and both branches stay right for one
   * read at any earlier moment: rows above an old horizon are still scanned,
   * and side rows at or below it are still there.
   */
  unreadHorizon?: Promise<number>;
}

export interface NarrowRow {
  id: number;
  /** null: no user_messages row (history the viewer did not receive). */
  flags: number | null;
  /** The message itself, when the query asked `withMessages`. */
  message?: MessageRow;
}

/** The narrow flags kept in side tables (src/domain/sparse-flags.ts); is_unread has its own (src/queries/unread.ts). */
const SPARSE_COLUMNS: ReadonlyMap<string, SparseFlag> = new Map([
  ['is_starred', sparseFlag('starred')],
  ['is_mentioned', sparseFlag('mentioned')],
  ['is_private', sparseFlag('dm')],
]);

/** A flag filter the side table of which can drive a personal-mode query (is:starred, is:mentioned, is:dm). */
function drivingSparseFilter(nq: NarrowQuery): Filter | undefined {
  if (nq.historyRecipients !== null) return undefined;
  return nq.filters.find((f) => f.kind === 'flag' && !f.negated && SPARSE_COLUMNS.has(f.column));
}

/**
 * One of the two halves of a personal-mode is:unread query (ADR 0024): the
 * viewer's rows above their unread horizon, or their unread side rows at or
 * below it. Every id of the first is larger than every id of the second.
 */
interface UnreadBranch {
  side: 'above' | 'below';
  horizon: number;
}

/** Whether is:unread drives a query: personal mode, not negated, and no sparse flag to drive it instead. */
function drivenByUnread(nq: NarrowQuery): boolean {
  if (nq.historyRecipients !== null || drivingSparseFilter(nq)) return false;
  return nq.filters.some((f) => f.kind === 'flag' && f.column === 'is_unread' && !f.negated);
}

/** The viewer's unread horizon, read once per request (the memo is the query's). */
function unreadHorizonOf(q: Q, nq: NarrowQuery): Promise<number> {
  return (nq.unreadHorizon ??= getUnreadHorizon(q, nq.viewerId));
}

/** The branches of a query driven by is:unread, in ascending id order; null for any other query (one branch). */
async function unreadBranches(q: Q, nq: NarrowQuery): Promise<UnreadBranch[] | null> {
  if (!drivenByUnread(nq)) return null;
  const horizon = await unreadHorizonOf(q, nq);
  return [
    { side: 'below', horizon },
    { side: 'above', horizon },
  ];
}

function base(q: Q, nq: NarrowQuery, withRow: boolean, branch?: UnreadBranch): { qb: Knex.QueryBuilder; idCol: string; driver?: Filter } {
  if (nq.historyRecipients === null) {
    if (branch?.side === 'below') {
      // The side rows in key order; the unread filter then reads each one's
      // flags, for the side table may hold rows read since.
      const qb = sideRowsAtOrBelow(q, nq.viewerId, branch.horizon);
      if (withRow || needsMessageRow(nq)) qb.join('messages as m', 'm.id', 'uu.message_id');
      return { qb, idCol: 'uu.message_id' };
    }
    const driver = drivingSparseFilter(nq);
    if (driver?.kind === 'flag') {
      // The side table first, ordered by its key (user_id, message_id): a page
      // of starred messages reads that many side rows, however long the history.
      const table = SPARSE_COLUMNS.get(driver.column)!.table;
      const qb = q(`${table} as sf`)
        .join('user_messages as um', function () {
          this.on('um.user_id', '=', 'sf.user_id').andOn('um.message_id', '=', 'sf.message_id');
        })
        .where('sf.user_id', nq.viewerId);
      // As below: the message row only when a filter reads it.
      if (withRow || needsMessageRow(nq)) qb.join('messages as m', 'm.id', 'sf.message_id');
      return { qb, idCol: 'sf.message_id', driver };
    }
    const qb = q('user_messages as um').where('um.user_id', nq.viewerId);
    if (branch) qb.where('um.message_id', '>', branch.horizon);
    // Without a condition on the message itself, the page is read from
    // user_messages' primary key alone (user_id, message_id, then flags):
    // the join would fetch every message row only to drop its columns.
    // Every user_messages row has its message: archiveMessages deletes a message's
    // rows with it, in its transaction (ADR 0020; on SQLite a foreign key cascades too).
    if (withRow || needsMessageRow(nq)) qb.join('messages as m', 'm.id', 'um.message_id');
    return { qb, idCol: 'um.message_id' };
  }
  // No realm condition: the recipients are this realm's channels (resolveNarrow
  // reads them through the viewer's realm), and a recipient belongs to one
  // realm. Without it the page is read from the (recipient_id, topic_key, id)
  // index alone, not from every message row it lists.
  const qb = q('messages as m')
    .leftJoin('user_messages as um', function () {
      this.on('um.message_id', '=', 'm.id').andOn('um.user_id', '=', q.raw('?', [nq.viewerId]));
    })
    .whereIn('m.recipient_id', nq.historyRecipients);
  return { qb, idCol: 'm.id' };
}

/** The filters that read nothing of the message row in personal mode: they use user_messages, a side table or the id. */
const ROWLESS_FILTERS: ReadonlySet<Filter['kind']> = new Set(['flag', 'flagmask', 'search', 'nothing']);

/** Whether a personal-mode query must join the messages table (a filter on its columns, or the rows themselves). */
function needsMessageRow(nq: NarrowQuery): boolean {
  return nq.withMessages === true || nq.filters.some((f) => !ROWLESS_FILTERS.has(f.kind));
}

function applyFilter(q: Q, qb: Knex.QueryBuilder, f: Filter, viewerId: number, idCol: string, position: number): void {
  if (f.kind === 'nothing') {
    qb.whereRaw('1 = 0');
    return;
  }
  const w = f.negated ? 'whereNot' : 'where';
  switch (f.kind) {
    case 'recipient':
      if (f.negated) qb.whereNotIn('m.recipient_id', f.ids.length ? f.ids : [0]);
      else qb.whereIn('m.recipient_id', f.ids.length ? f.ids : [0]);
      return;
    case 'topic':
      qb[w]('m.topic_key', f.key);
      return;
    case 'sender':
      qb[w]('m.sender_id', f.id);
      return;
    case 'flag': {
      const sparse = SPARSE_COLUMNS.get(f.column);
      if (sparse) {
        // A side row exists only beside a user_messages row with the flag, so
        // in history mode a message without the viewer's row has none.
        const sub = q(`${sparse.table} as sx`).where('sx.user_id', viewerId).whereRaw(`sx.message_id = ${idCol}`).select(q.raw('1'));
        if (f.negated) qb.whereNotExists(sub);
        else qb.whereExists(sub);
        return;
      }
      // is_unread: the read bit decides (in history mode a missing row means read).
      if (f.negated) qb.where((b) => b.whereNull('um.message_id').orWhereRaw('(um.flags & ?) <> 0', [READ]));
      else qb.whereRaw('(um.flags & ?) = 0', [READ]);
      return;
    }
    case 'flagmask':
      if (f.negated) qb.where((b) => b.whereNull('um.message_id').orWhereRaw('(um.flags & ?) = 0', [f.mask]));
      else qb.whereRaw('(um.flags & ?) <> 0', [f.mask]);
      return;
    case 'has':
      qb[w](`m.${f.column}`, true);
      return;
    case 'reaction': {
      const sub = q('reactions as r').whereRaw('r.message_id = m.id').select(q.raw('1'));
      if (f.negated) qb.whereNotExists(sub);
      else qb.whereExists(sub);
      return;
    }
    case 'id':
      qb[w]('m.id', f.id);
      return;
    case 'resolved':
      // '✔ ' prefix; LIKE on the key column (the prefix has no case).
      if (f.negated) qb.whereNot('m.topic_key', 'like', '✔ %');
      else qb.where('m.topic_key', 'like', '✔ %');
      return;
    case 'search':
      applySearch(q, qb, f, idCol, `st${position}_`);
      return;
    case 'muted': {
      const policy = (policies: number[]) =>
        q('user_topics as ut')
          .where('ut.user_id', f.viewerId)
          .whereRaw('ut.recipient_id = m.recipient_id')
          .whereRaw('ut.topic_key = m.topic_key')
          .whereIn('ut.visibility_policy', policies)
          .select(q.raw('1'));
      const muted = (b: Knex.QueryBuilder) =>
        b
          .where((c) => c.whereIn('m.recipient_id', f.mutedRecipients.length ? f.mutedRecipients : [0]).whereNotExists(policy([2, 3])))
          .orWhereExists(policy([1]));
      if (f.negated) qb.whereNot(muted);
      else qb.where(muted);
      return;
    }
    case 'topicPolicy': {
      const sub = q('user_topics as ut')
        .where({ 'ut.user_id': f.viewerId, 'ut.visibility_policy': f.policy })
        .whereRaw('ut.recipient_id = m.recipient_id')
        .whereRaw('ut.topic_key = m.topic_key')
        .select(q.raw('1'));
      if (f.negated) qb.whereNotExists(sub);
      else qb.whereExists(sub);
      return;
    }
  }
}

/**
 * Full text (ADR 0013): every word must begin a word of the message's topic
 * or content. A word that begins exactly one indexed word is an inner join
 * on (term, message_id): the database walks that word's rows backwards from
 * the anchor and stops at the page's end, whatever the number of matches in
 * history. A word that begins several indexed words is a semi-join (read
 * whole, then sorted: correct, and as costly as its matches).
 */
function applySearch(q: Q, qb: Knex.QueryBuilder, f: Extract<Filter, { kind: 'search' }>, idCol: string, alias: string): void {
  if (f.words.length === 0) {
    if (!f.negated) qb.whereRaw('1 = 0');
    return;
  }
  if (!f.negated) {
    f.words.forEach((w, i) => {
      if (w.terms?.length === 0) qb.whereRaw('1 = 0');
      else if (w.terms?.length === 1) {
        const st = `${alias}${i}`;
        qb.join(`${SEARCH_TABLE} as ${st}`, (j) => j.on(`${st}.message_id`, '=', idCol).andOnVal(`${st}.term`, '=', w.terms![0]!));
      } else qb.whereIn(idCol, wordMessages(q, w));
    });
    return;
  }
  qb.whereNot((b) => {
    for (const w of f.words) b.whereIn(idCol, wordMessages(q, w));
  });
}

/** The ids of the messages containing a word a search word begins. */
function wordMessages(q: Q, w: SearchWord): Knex.QueryBuilder {
  const sub = q(SEARCH_TABLE).select('message_id');
  if (w.terms) return sub.whereIn('term', w.terms.length ? w.terms : ['']);
  const [from, to] = prefixRange(w.prefix);
  return sub.where('term', '>=', from).andWhere('term', '<', to);
}

/** `withRow`: the caller reads a column of the message row itself. */
function filtered(q: Q, nq: NarrowQuery, withRow = false, branch?: UnreadBranch) {
  const { qb, idCol, driver } = base(q, nq, withRow, branch);
  // The side table that drives the query (is:starred, ...) is its filter already.
  nq.filters.forEach((f, position) => {
    if (f !== driver) applyFilter(q, qb, f, nq.viewerId, idCol, position);
  });
  return { qb, idCol: searchJoinColumn(nq) ?? idCol };
}

/**
 * The message id column of the first search join, if any: the page is
 * bounded and ordered by it, so the planner walks that word's rows from the
 * anchor (it holds the same values as the base id column). SQLite, without
 * statistics, otherwise walked the viewer's messages and probed the word for
 * each (measured: 14–30 ms against 0.2–0.4 ms at 10k and 100k).
 */
function searchJoinColumn(nq: NarrowQuery): string | null {
  for (const [position, f] of nq.filters.entries()) {
    if (f.kind !== 'search' || f.negated) continue;
    const i = f.words.findIndex((w) => w.terms?.length === 1);
    if (i >= 0) return `st${position}_${i}.message_id`;
  }
  return null;
}

/** Keyset page: ids `op` anchor in `order`, at most `limit` (callers ask for one more to learn found_*). */
export async function fetchNarrowRange(q: Q, nq: NarrowQuery, op: '<=' | '>=', anchor: number, limit: number): Promise<NarrowRow[]> {
  if (limit <= 0) return [];
  const branches = await unreadBranches(q, nq);
  if (!branches) return fetchBranchRange(q, nq, undefined, op, anchor, limit);
  // The branches split the ids at the horizon: walked in the page's order,
  // their pages concatenate into one sorted page.
  const rows: NarrowRow[] = [];
  for (const b of op === '<=' ? [...branches].reverse() : branches) {
    if (rows.length >= limit) break;
    // A branch wholly on the anchor's far side has nothing to give.
    if (op === '<=' && b.side === 'above' && anchor <= b.horizon) continue;
    if (op === '>=' && b.side === 'below' && anchor > b.horizon) continue;
    rows.push(...(await fetchBranchRange(q, nq, b, op, anchor, limit - rows.length)));
  }
  return rows;
}

async function fetchBranchRange(
  q: Q,
  nq: NarrowQuery,
  branch: UnreadBranch | undefined,
  op: '<=' | '>=',
  anchor: number,
  limit: number,
): Promise<NarrowRow[]> {
  const { qb, idCol } = filtered(q, nq, false, branch);
  qb.where(idCol, op, anchor)
    .orderBy(idCol, op === '<=' ? 'desc' : 'asc')
    .limit(limit);
  return (await selectPage(qb, nq, idCol)).map(nq.withMessages ? toFullNarrowRow : toNarrowRow);
}

/**
 * A row of a page: the message id and the viewer's flags (NULL: no row of
 * theirs), or with `withMessages` the message's own columns and the flags as um_flags.
 */
type PageRow = Partial<TableRow<'messages'>> & { id: number; flags?: number | null; um_flags?: number | null };

function selectPage(qb: Knex.QueryBuilder, nq: NarrowQuery, idCol: string): Promise<PageRow[]> {
  if (nq.withMessages) return selectMessageColumns(qb).select('um.flags as um_flags');
  return qb.select(`${idCol} as id`, 'um.flags as flags');
}

/** The narrow's rows among explicit ids. */
export async function fetchNarrowByIds(q: Q, nq: NarrowQuery, ids: number[]): Promise<NarrowRow[]> {
  if (ids.length === 0) return [];
  const rows: PageRow[] = [];
  // Below the horizon, then above it: ascending ids still.
  for (const branch of (await unreadBranches(q, nq)) ?? [undefined]) {
    rows.push(
      ...(await inChunks<PageRow>(ids, (slice) => {
        const { qb, idCol } = filtered(q, nq, false, branch);
        return selectPage(qb.whereIn(idCol, slice).orderBy(idCol, 'asc'), nq, idCol);
      })),
    );
  }
  return rows.map(nq.withMessages ? toFullNarrowRow : toNarrowRow);
}

/**
 * The oldest unread message of the narrow. A message without the viewer's
 * row is read, so their own rows are the whole search: the narrow runs in
 * personal mode with is:unread (the side rows, then the rows above the
 * horizon), history mode's channels becoming a filter.
 */
export async function findFirstUnread(q: Q, nq: NarrowQuery): Promise<number | null> {
  const filters: Filter[] = [...nq.filters];
  if (nq.historyRecipients !== null) filters.push({ kind: 'recipient', ids: nq.historyRecipients, negated: false });
  filters.push({ kind: 'flag', column: 'is_unread', negated: false });
  // The same horizon as the page's, when that is an is:unread page too.
  const unreadHorizon = unreadHorizonOf(q, nq);
  const [row] = await fetchNarrowRange(q, { viewerId: nq.viewerId, historyRecipients: null, filters, unreadHorizon }, '>=', 0, 1);
  return row ? row.id : null;
}

/** The first message of the narrow sent at or after a time (an is:unread narrow's branches in id order: the first found is the first). */
export async function findFirstAtOrAfter(q: Q, nq: NarrowQuery, timestamp: number): Promise<number | null> {
  for (const branch of (await unreadBranches(q, nq)) ?? [undefined]) {
    const { qb, idCol } = filtered(q, nq, true, branch);
    const row = await qb.where('m.date_sent', '>=', timestamp).orderBy(idCol, 'asc').first(`${idCol} as id`);
    if (row) return Number(row.id);
  }
  return null;
}

const toNarrowRow = (r: PageRow): NarrowRow => ({
  id: Number(r.id),
  flags: r.flags === null || r.flags === undefined ? null : Number(r.flags),
});

/**
 * `m.*` brings the message's own columns; the viewer's flags come as um_flags
 * (left on the row: deleting a key would slow every later read of it).
 */
function toFullNarrowRow(r: PageRow): NarrowRow {
  const flags = r.um_flags === null || r.um_flags === undefined ? null : Number(r.um_flags);
  const message = toMessageRow(r);
  return { id: message.id, flags, message };
}

/** Recipient ids of the organization's web-public channels (the `channels:web-public` operand). */
export async function listWebPublicChannelRecipientIds(q: Q, realmId: number): Promise<number[]> {
  // A channel's recipient is made in the transaction that creates it: never NULL once committed.
  return (await q('channels').where({ realm_id: realmId, is_web_public: true }).pluck('recipient_id')) as number[];
}

/**
 * Recipient ids of the DM conversations a user takes part in (`dm-including`);
 * with `groupsOnly`, only those of three or more participants (`group-pm-with`).
 */
export async function listDmRecipientIdsOfUser(q: Q, userId: number, { groupsOnly }: { groupsOnly: boolean }): Promise<number[]> {
  const qb = q('subscriptions as s')
    .join('recipients as r', 'r.id', 's.recipient_id')
    .join('dm_groups as g', 'g.id', 'r.type_id')
    .where({ 's.user_id': userId, 'r.type': RecipientType.DM_GROUP });
  if (groupsOnly) qb.where('g.group_size', '>', 2);
  return qb.pluck('s.recipient_id');
}
