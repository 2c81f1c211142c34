import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { RecipientType } from '../domain/recipients';
import { inChunks } from './ids';
import { MessageRow, selectMessageColumns, toMessageRow } from './messages';

type Q = Knex | Knex.Transaction;

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
  | { kind: 'search'; words: string[]; negated: boolean }
  /** Muted for the viewer: a muted channel's message unless its topic is unmuted or followed, or a muted topic's (Zulip's exclude_muting_conditions). */
  | { kind: 'muted'; viewerId: number; mutedRecipients: number[]; negated: boolean }
  /** In a topic for which the viewer has this policy (is:followed). */
  | { kind: 'topicPolicy'; viewerId: number; policy: number; negated: boolean }
  | { kind: 'nothing' };

/**
 * A narrow ready to run. Personal mode reads the viewer's user_messages
 * (index (user_id, message_id) and the flag indexes); history mode reads
 * messages of channels whose history the viewer may read (index
 * (recipient_id, topic_key, id)), with the viewer's row joined when present.
 */
export interface NarrowQuery {
  viewerId: number;
  realmId: number;
  /** null: personal mode. Otherwise the channel recipients history mode may read. */
  historyRecipients: number[] | null;
  filters: Filter[];
  /** Page queries also return each message's row (GET /messages), saving a second round trip. */
  withMessages?: boolean;
  /**
   * Page queries return the id, the viewer's flags and the channel's current
   * name (GET /messages served from the message cache: the cached dicts
   * leave the name out, so that renaming a channel invalidates nothing).
   */
  withChannelNames?: boolean;
}

export interface NarrowRow {
  id: number;
  /** null: no user_messages row (history the viewer did not receive). */
  flags: number | null;
  /** The message itself, when the query asked `withMessages`. */
  message?: MessageRow;
  /** The channel's name (null: a direct message), when the query asked `withChannelNames`. */
  channelName?: string | null;
}

function base(q: Q, nq: NarrowQuery): { qb: Knex.QueryBuilder; idCol: string } {
  if (nq.historyRecipients === null) {
    const qb = q('user_messages as um').join('messages as m', 'm.id', 'um.message_id').where('um.user_id', nq.viewerId);
    return { qb, idCol: 'um.message_id' };
  }
  const qb = q('messages as m')
    .leftJoin('user_messages as um', function () {
      this.on('um.message_id', '=', 'm.id').andOn('um.user_id', '=', q.raw('?', [nq.viewerId]));
    })
    .where('m.realm_id', nq.realmId)
    .whereIn('m.recipient_id', nq.historyRecipients);
  return { qb, idCol: 'm.id' };
}

function applyFilter(q: Q, qb: Knex.QueryBuilder, f: Filter): void {
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
    case 'flag':
      // In history mode a missing row means read, not starred, not mentioned.
      if (f.negated) qb.where((b) => b.whereNull('um.id').orWhere(`um.${f.column}`, 0));
      // A literal 1, not a bound parameter: only then can SQLite use the partial
      // index on the flag (migration 005). The column name comes from the Filter type.
      else qb.whereRaw(`um.${f.column} = 1`);
      return;
    case 'flagmask':
      if (f.negated) qb.where((b) => b.whereNull('um.id').orWhereRaw('(um.flags & ?) = 0', [f.mask]));
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
      applySearch(q, qb, f.words, f.negated);
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

/** Full text: FTS5 on SQLite, FULLTEXT on MySQL; every word must match (as a prefix). */
function applySearch(q: Q, qb: Knex.QueryBuilder, words: string[], negated: boolean): void {
  if (words.length === 0) {
    if (!negated) qb.whereRaw('1 = 0');
    return;
  }
  if (dialectOf(q as Knex) === 'mysql') {
    // InnoDB FULLTEXT never indexes words under innodb_ft_min_token_size (3)
    // or its stopwords, and a required (+) term it cannot index matches
    // nothing: those words are matched with LIKE instead.
    const indexable = words.filter((w) => [...w].length >= 3 && !INNODB_STOPWORDS.has(w));
    const rest = words.filter((w) => !indexable.includes(w));
    const build = (b: Knex.QueryBuilder) => {
      if (indexable.length) b.whereRaw('MATCH(m.topic, m.content) AGAINST (? IN BOOLEAN MODE)', [indexable.map((w) => `+${w}*`).join(' ')]);
      for (const w of rest)
        b.where((c) => c.where('m.content', 'like', `%${escapeLike(w)}%`).orWhere('m.topic', 'like', `%${escapeLike(w)}%`));
    };
    if (negated) qb.whereNot(build);
    else qb.where(build);
    return;
  }
  const expr = words.map((w) => `"${w}"*`).join(' ');
  const sql = 'm.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)';
  if (negated) qb.whereRaw(`NOT ${sql}`, [expr]);
  else qb.whereRaw(sql, [expr]);
}

function filtered(q: Q, nq: NarrowQuery) {
  const { qb, idCol } = base(q, nq);
  for (const f of nq.filters) applyFilter(q, qb, f);
  return { qb, idCol };
}

/** Keyset page: ids `op` anchor in `order`, at most `limit` (callers ask for one more to learn found_*). */
export async function fetchNarrowRange(q: Q, nq: NarrowQuery, op: '<=' | '>=', anchor: number, limit: number): Promise<NarrowRow[]> {
  if (limit <= 0) return [];
  const { qb, idCol } = filtered(q, nq);
  qb.where(idCol, op, anchor)
    .orderBy(idCol, op === '<=' ? 'desc' : 'asc')
    .limit(limit);
  return (await selectPage(qb, nq, idCol)).map(nq.withMessages ? toFullNarrowRow : toNarrowRow);
}

function selectPage(qb: Knex.QueryBuilder, nq: NarrowQuery, idCol: string): Promise<Array<Record<string, unknown>>> {
  if (nq.withMessages) return selectMessageColumns(qb).select('um.flags as um_flags');
  if (nq.withChannelNames) {
    return qb
      .leftJoin('channels as c', 'c.recipient_id', 'm.recipient_id')
      .select(`${idCol} as id`, 'um.flags as flags', 'c.name as channel_name');
  }
  return qb.select(`${idCol} as id`, 'um.flags as flags');
}

/** The narrow's rows among explicit ids. */
export async function fetchNarrowByIds(q: Q, nq: NarrowQuery, ids: number[]): Promise<NarrowRow[]> {
  if (ids.length === 0) return [];
  const rows = await inChunks<Record<string, unknown>>(ids, (slice) => {
    const { qb, idCol } = filtered(q, nq);
    return selectPage(qb.whereIn(idCol, slice).orderBy(idCol, 'asc'), nq, idCol);
  });
  return rows.map(nq.withMessages ? toFullNarrowRow : toNarrowRow);
}

/** The oldest unread message of the narrow (an index range scan on (user_id, is_unread, message_id)). */
export async function findFirstUnread(q: Q, nq: NarrowQuery): Promise<number | null> {
  const { qb, idCol } = filtered(q, nq);
  const row = await qb.where('um.is_unread', 1).orderBy(idCol, 'asc').first(`${idCol} as id`);
  return row ? Number(row.id) : null;
}

/** The first message of the narrow sent at or after a time. */
export async function findFirstAtOrAfter(q: Q, nq: NarrowQuery, timestamp: number): Promise<number | null> {
  const { qb, idCol } = filtered(q, nq);
  const row = await qb.where('m.date_sent', '>=', timestamp).orderBy(idCol, 'asc').first(`${idCol} as id`);
  return row ? Number(row.id) : null;
}

const toNarrowRow = (r: Record<string, unknown>): NarrowRow => {
  const row: NarrowRow = { id: Number(r.id), flags: r.flags === null || r.flags === undefined ? null : Number(r.flags) };
  if (r.channel_name !== undefined) row.channelName = r.channel_name as string | null;
  return row;
};

/**
 * `m.*` brings the message's own columns; the viewer's flags come as um_flags
 * (left on the row: deleting a key would slow every later read of it).
 */
function toFullNarrowRow(r: Record<string, unknown>): NarrowRow {
  const flags = r.um_flags === null || r.um_flags === undefined ? null : Number(r.um_flags);
  const message = toMessageRow(r);
  return { id: message.id, flags, message };
}

/** Recipient ids of the organization's web-public channels (the `channels:web-public` operand). */
export async function listWebPublicChannelRecipientIds(q: Q, realmId: number): Promise<number[]> {
  return q('channels').where({ realm_id: realmId, is_web_public: true }).pluck('recipient_id');
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

/** InnoDB's default full-text stopwords (information_schema.INNODB_FT_DEFAULT_STOPWORD). */
const INNODB_STOPWORDS = new Set([
  'a',
  'about',
  'an',
  'are',
  'as',
  'at',
  'be',
  'by',
  'com',
  'de',
  'en',
  'for',
  'from',
  'how',
  'i',
  'in',
  'is',
  'it',
  'la',
  'of',
  'on',
  'or',
  'that',
  'the',
  'this',
  'to',
  'was',
  'what',
  'when',
  'where',
  'who',
  'will',
  'with',
  'und',
  'www',
]);

const escapeLike = (w: string) => w.replace(/[\\%_]/g, (c) => `\\${c}`);
