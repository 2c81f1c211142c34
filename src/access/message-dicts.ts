import type { Knex } from 'knex';
import type { InvalidatingCache } from '../cache/invalidating-cache';
import type { UserLookup } from '../cache/users';
import type { AppContext } from '../context';
import type { ChannelFinder } from './narrow';
import type { Schema } from '../contract';
import { RecipientType } from '../domain/recipients';
import { getDmParticipantUsers, getEdits, getMessageRows, getReactions, MessageRow } from '../queries/messages';
import type { UserRow } from '../queries/rows';
import type { Caller } from './viewer';
import type { CompiledLinkifier } from '../domain/linkifiers';
import { topicLinksOf } from '../markdown/zulip';
import { listSubmessages } from '../queries/submessages';
import { DictReadContext, MessageDict, MessageViewOptions, renderMessageDict, toMessageDict } from '../serializers/message-dicts';
import { EncodedJson, encodedList } from '../serializers/encoded-json';
import { encodeMessagePage, type MatchFields } from '../serializers/message-json';

/** The per-process message cache (src/cache/messages.ts); null when CACHE_MESSAGES is 0. */
export type MessageDictCache = Pick<InvalidatingCache<number, MessageDict>, 'load'> | null;

/** Where a page's messages and people come from: the per-process caches. */
export interface PageSources {
  dicts: MessageDictCache;
  /** Senders and DM participants by id (src/cache/users.ts). */
  users: UserLookup;
  /** The channels a narrow names (src/cache/channels.ts). */
  channels: ChannelFinder;
  /** Channels by id (src/cache/channels.ts): their current names are the display_recipient of their messages. */
  channelsById: (realmId: number, channelIds: Iterable<number>) => Promise<ReadonlyMap<number, { channel: { name: string } }>>;
  /** The organization's linkifiers, compiled (src/cache/linkifiers.ts), for the topics' links. */
  linkifiers?: (realmId: number) => Promise<readonly CompiledLinkifier[]>;
}

export const pageSources = (ctx: AppContext): PageSources => ({
  dicts: ctx.messageCache,
  users: ctx.caches.users.lookup,
  channels: async (realmId, to) => (await ctx.caches.channels.forSending(realmId, to))?.channel,
  channelsById: (realmId, ids) => ctx.caches.channels.byIds(realmId, ids),
  linkifiers: (realmId) => ctx.caches.linkifiers.get(realmId),
});

/** One message of a page: its id, the viewer's flags, and what the page query already read. */
export interface PageMessage {
  id: number;
  flags: number | null;
  /** The row, when the caller has it (no cache, or GET /messages/{id}); it carries the channel's name. */
  row?: MessageRow;
}

/**
 * The wire messages of a page, in its order. Each message's dict comes from
 * the cache; the misses are read together (their rows unless given, then
 * reactions, submessages, edit history, DM participants) and stored. The
 * people — senders and DM participants — come from the user cache: their
 * names, emails and avatars change without touching any message, so they
 * are not part of the dict. A page of cached messages and cached people
 * costs no statement after the page query.
 */
export async function renderPage(
  db: Knex,
  sources: PageSources,
  viewer: Caller,
  page: readonly PageMessage[],
  opts: MessageViewOptions,
): Promise<Array<{ message: Schema<'Message'>; dict: MessageDict }>> {
  if (page.length === 0) return [];
  const { dicts, rc } = await readPage(db, sources, viewer, page);
  return page.map((m) => {
    const dict = dicts.get(m.id)!;
    return { message: renderMessageDict(dict, m.flags, rc, opts), dict };
  });
}

/**
 * The same page as JSON text (src/serializers/message-json.ts), for GET
 * /messages: each cached dict's own part is encoded once and spliced.
 * `match` adds a message's search highlights, from its dict.
 */
export async function encodePage(
  db: Knex,
  sources: PageSources,
  viewer: Caller,
  page: readonly PageMessage[],
  opts: MessageViewOptions,
  match?: (dict: MessageDict) => MatchFields,
): Promise<EncodedJson<Array<Schema<'Message'>>>> {
  if (page.length === 0) return encodedList([]);
  const { dicts, rc } = await readPage(db, sources, viewer, page);
  return encodeMessagePage(
    page.map((m) => {
      const dict = dicts.get(m.id)!;
      return { dict, flags: m.flags, match: match?.(dict) };
    }),
    rc,
    opts,
  );
}

/** A page's dicts and what rendering them reads once per request. */
async function readPage(
  db: Knex,
  sources: PageSources,
  viewer: Caller,
  page: readonly PageMessage[],
): Promise<{ dicts: Map<number, MessageDict>; rc: DictReadContext }> {
  const { dicts, users } = await loadDicts(db, sources, page);
  const linkifiers = (await sources.linkifiers?.(viewer.user.realm_id)) ?? [];
  const rc: DictReadContext = {
    users,
    channelNames: await channelNamesOf(sources, viewer.user.realm_id, page, dicts),
    realm: viewer.realm,
    senderAvatars: new Map<number, string | null>(),
    // Memoised per linkifier list across pages (topicLinksOf).
    topicLinks: (topic: string) => topicLinksOf(topic, linkifiers),
  };
  return { dicts, rc };
}

/**
 * The current name of each channel the page's messages are in, by recipient
 * id: from the rows when the caller read them, otherwise from the channel
 * cache (its misses in one statement, whatever the number of channels). The
 * dicts leave names out, so a rename invalidates the channel, never its
 * messages.
 */
async function channelNamesOf(
  sources: PageSources,
  realmId: number,
  page: readonly PageMessage[],
  dicts: ReadonlyMap<number, MessageDict>,
): Promise<Map<number, string>> {
  const names = new Map<number, string>();
  const unnamed = new Map<number, number>(); // channel id → recipient id
  for (const m of page) {
    const d = dicts.get(m.id)!;
    if (d.stream_id === null) continue;
    if (m.row?.channel_name) names.set(d.recipient_id, m.row.channel_name);
    else unnamed.set(d.stream_id, d.recipient_id);
  }
  if (unnamed.size) {
    for (const [channelId, c] of await sources.channelsById(realmId, unnamed.keys())) names.set(unnamed.get(channelId)!, c.channel.name);
  }
  return names;
}

async function loadDicts(
  db: Knex,
  sources: PageSources,
  page: readonly PageMessage[],
): Promise<{ dicts: Map<number, MessageDict>; users: Map<number, UserRow> }> {
  const cache = sources.dicts;
  const dicts = new Map<number, MessageDict>();
  const missing: PageMessage[] = [];
  let settle: (read: Map<number, MessageDict> | null) => void = () => {};
  const batch = new Promise<Map<number, MessageDict> | null>((resolve) => (settle = resolve));
  const hits: Array<Promise<MessageDict | undefined>> = [];
  if (cache) {
    // `load` calls its reader at once for a miss, so `missing` is complete
    // when the loop ends; each miss is stored when the batch below settles,
    // unless an invalidation came in between (InvalidatingCache).
    for (const m of page) {
      let missed = false;
      const loaded = cache.load(m.id, () => {
        missed = true;
        missing.push(m);
        return batch.then((read) => read?.get(m.id));
      });
      if (!missed) hits.push(loaded);
    }
    for (const d of await Promise.all(hits)) if (d) dicts.set(d.id, d);
  } else {
    missing.push(...page);
  }

  const people = new Set<number>();
  for (const d of dicts.values()) {
    people.add(d.sender_id);
    for (const id of d.dm_participant_ids ?? []) people.add(id);
  }
  if (missing.length === 0) return { dicts, users: await sources.users(people) };

  try {
    const known = missing.filter((m) => m.row).map((m) => m.row!);
    const unknown = missing.filter((m) => !m.row).map((m) => m.id);
    const rows = unknown.length ? [...known, ...(await getMessageRows(db, unknown))] : known;
    const read = await readDicts(db, sources.users, rows, people);
    for (const d of read.dicts.values()) dicts.set(d.id, d);
    settle(read.dicts);
    return { dicts, users: read.users };
  } catch (err) {
    settle(null);
    throw err;
  }
}

/**
 * Dicts for these rows and the user rows of `people` and of the rows'
 * senders and DM participants (those from the user cache): one batch of
 * statements, run together,
 * whatever the number of rows.
 */
async function readDicts(
  db: Knex,
  lookupUsers: UserLookup,
  rows: MessageRow[],
  people: Set<number>,
): Promise<{ dicts: Map<number, MessageDict>; users: Map<number, UserRow> }> {
  const ids = rows.map((r) => r.id);
  const dmRecipients = new Set<number>();
  const edited: number[] = [];
  for (const r of rows) {
    people.add(r.sender_id);
    if (r.recipient_type !== RecipientType.CHANNEL) dmRecipients.add(r.recipient_id);
    // The times find messages edited before the marker existed (migration 010).
    if (r.has_edit_history || r.last_edit_time !== null || r.last_moved_time !== null) edited.push(r.id);
  }
  // Edit history is read whatever the organization shows of it: the dict
  // is shared, and the policy is applied when it is rendered.
  const [participantUsers, reactions, edits, users, submessages] = await Promise.all([
    getDmParticipantUsers(db, [...dmRecipients]),
    getReactions(db, ids),
    edited.length ? getEdits(db, edited) : Promise.resolve([]),
    lookupUsers(people),
    listSubmessages(
      db,
      rows.filter((r) => r.has_submessages).map((r) => r.id),
    ),
  ]);
  for (const list of participantUsers.values()) for (const u of list) if (!users.has(u.id)) users.set(u.id, u);
  const reactionsOf = groupBy(reactions, (r) => r.message_id);
  const editsOf = groupBy(edits, (e) => e.message_id);
  const submessagesOf = groupBy(submessages, (s) => s.message_id);
  const dicts = new Map<number, MessageDict>();
  for (const r of rows) {
    const participants = participantUsers.get(r.recipient_id);
    dicts.set(
      r.id,
      toMessageDict(r, {
        reactions: reactionsOf.get(r.id) ?? [],
        submessages: submessagesOf.get(r.id) ?? [],
        edits: editsOf.get(r.id) ?? [],
        dmParticipantIds: participants ? participants.map((u) => u.id) : null,
      }),
    );
  }
  return { dicts, users };
}

function groupBy<T>(items: readonly T[], key: (t: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
