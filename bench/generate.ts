/**
 * Benchmark dataset generator: a realistic organization at one scale.
 *
 *   BENCH_SCALE=small|10k|100k|1m BENCH_DB=sqlite|mariadb [BENCH_MYSQL_URL=…] node dist/bench/generate.js
 *   BENCH_PLAN_ONLY=1 … prints the plan (channel sizes, expected row counts) without touching a database.
 *
 * The realm, users (real API keys), channels with their subscriptions and
 * DM conversations are made through the actions (doCreateRealm,
 * createUserInTx, createChannelInTx, dmGroupRecipient). Messages,
 * user_messages and reactions are bulk-inserted (messages and reactions with explicit ids), as
 * src/actions/messages.ts would store them: rendered_content a plain
 * <p>…</p> (mention spans as the renderer writes them), topic_key the
 * lower-cased topic, a user_messages row for every subscriber at send time,
 * the sender's copy read, DMs flagged is_private.
 *
 * Writes bench/.data/<db>-<scale>/credentials.json and, last,
 * manifest.json (the runner treats a dataset without one as missing).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { createChannelInTx } from '../src/actions/channels';
import { doCreateRealm } from '../src/actions/realms';
import { dmGroupRecipient } from '../src/actions/send';
import { createUserInTx } from '../src/actions/users';
import { createDb, mysqlConnectionOptions } from '../src/db/connection';
import { settleAfterBulkLoad, type SettleReport } from '../src/db/settle';
import { migrateLatest } from '../src/db/migrate';
import { inTransaction } from '../src/db/transaction';
import { flagMask } from '../src/domain/flags';
import { messageSearchTerms } from '../src/domain/search';
import { Role } from '../src/domain/roles';
import { SPARSE_FLAGS } from '../src/domain/sparse-flags';
import { UNREAD_TABLE } from '../src/queries/unread';
import { rebuildAllTopicSummaries } from '../src/queries/topic-summaries';
import type { UserRow } from '../src/queries/rows';
import { BulkSink, mysqlSink, sqliteSink, TableRows, Value } from './lib/bulk';
import { credentialsPath, Manifest, MANIFEST_VERSION, manifestPath, resolveTarget, Target } from './lib/dataset';
import { fmtInt, Progress } from './lib/progress';
import { Rng, WeightedSampler, zipfWeights } from './lib/random';
import type { Scale } from './lib/scales';
import { EMOJI, FIRST_NAMES, LAST_NAMES, SEARCH_WORD, TEAM_WORDS, vocabulary } from './lib/words';
import { runMain } from './lib/run-main';

const READ = flagMask('read');
const STARRED = flagMask('starred');
const MENTIONED = flagMask('mentioned');
const STREAM_WILDCARD = flagMask('stream_wildcard_mentioned');
const IS_PRIVATE = flagMask('is_private');

// ---------------------------------------------------------------- the plan

type ChannelKind = 'public' | 'private-shared' | 'private-protected';
type ChannelTag = 'general' | 'channel100' | 'big' | 'team' | 'events';

interface PlanUser {
  idx: number;
  email: string;
  fullName: string;
  role: number;
  /** Relative chattiness (0 for lurkers, who never send). */
  activity: number;
  /** Fraction of history before which (almost) everything is read. */
  readHorizon: number;
  /** After the horizon, the chance a message is read. */
  readAfter: number;
  starRate: number;
  lurker: boolean;
  /** When the user joined the organization, as a fraction of history. */
  orgJoin: number;
  /** Stopped coming at scale.idleSince (scales with idleShare): soft-deactivated at the end. */
  idle: boolean;
}

interface PlanChannel {
  idx: number;
  name: string;
  kind: ChannelKind;
  tag: ChannelTag;
  /** Share of all messages. */
  share: number;
  /** Members sorted by join fraction (user idx), and their join fractions. */
  members: number[];
  joins: number[];
  creator: number;
  topics: string[];
}

interface PlanDm {
  members: number[];
}

interface Plan {
  scale: Scale;
  users: PlanUser[];
  channels: PlanChannel[];
  dms: PlanDm[];
  dmWeights: number[];
  reader: number;
  poster: number;
  eventSender: number;
  eventReceiver: number;
  lurkers: number[];
  expectedUserMessages: number;
}

function makePlan(scale: Scale): Plan {
  const rng = new Rng(scale.seed);
  const U = scale.users;

  // Users: designated ones first (ordinary members), then staff, members, guests at the end.
  const reader = 1;
  const poster = 2;
  const eventSender = 3;
  const eventReceiver = 4;
  const lurkers = scale.lurkerUnreadShares.map((_, i) => 5 + i);
  const firstFree = 5 + lurkers.length;
  const admins = Math.max(2, Math.round(U * 0.005));
  const moderators = Math.max(2, Math.round(U * 0.01));
  const guests = Math.max(1, Math.round(U * 0.02));
  const names = FIRST_NAMES.flatMap((f) => LAST_NAMES.map((l) => `${f} ${l}`));
  rng.shuffle(names);
  const activityRank = rng.shuffle(Array.from({ length: U }, (_, i) => i));
  const users: PlanUser[] = [];
  for (let i = 0; i < U; i++) {
    const role =
      i === 0
        ? Role.OWNER
        : i >= firstFree && i < firstFree + admins
          ? Role.ADMINISTRATOR
          : i >= firstFree + admins && i < firstFree + admins + moderators
            ? Role.MODERATOR
            : i >= U - guests
              ? Role.GUEST
              : Role.MEMBER;
    const lurker = lurkers.includes(i);
    const fullName = names[i % names.length]! + (i >= names.length ? ` ${Math.floor(i / names.length) + 1}` : '');
    users.push({
      idx: i,
      email: `user${String(i).padStart(4, '0')}@bench.parley.example`,
      fullName,
      role,
      activity: lurker ? 0 : 1 / Math.pow(activityRank[i]! + 1, 0.8),
      readHorizon: 0.95 + rng.next() * 0.049,
      readAfter: 0.3 + rng.next() * 0.65,
      starRate: i === reader ? 0.03 : 0.002,
      lurker,
      // 60% were there from the start; the rest joined along the way.
      orgJoin: i < firstFree || i === 0 || rng.chance(0.6) ? 0 : rng.next() * 0.9,
      idle: false,
    });
  }
  // The idle users, from a source of their own: the other scales' plans stay as they were.
  if (scale.idleShare) {
    const idleRng = new Rng(scale.seed + 7);
    for (const u of users) if (u.idx >= firstFree && u.role !== Role.OWNER && idleRng.chance(scale.idleShare)) u.idle = true;
  }
  users[reader]!.readHorizon = 0.98;
  users[reader]!.readAfter = 0.5;
  users[reader]!.activity = Math.max(users[reader]!.activity, 0.05);
  users[poster]!.activity = Math.max(users[poster]!.activity, 0.05);

  const pickMembers = (n: number, must: number[], allowLurkers = false): number[] => {
    const chosen = new Set<number>(must);
    const eligible = users.filter((u) => (allowLurkers || !u.lurker) && !chosen.has(u.idx));
    const sampler = new WeightedSampler(eligible.map((u) => 0.02 + u.activity));
    let guard = 0;
    while (chosen.size < Math.min(n, U) && guard++ < n * 200) chosen.add(eligible[sampler.sample(rng)]!.idx);
    for (const u of eligible) if (chosen.size < n && !chosen.has(u.idx)) chosen.add(u.idx);
    return [...chosen];
  };

  // Channels: general (everyone, quiet), the 100-subscriber channel, a few big ones, the events pair, teams.
  type Draft = Omit<PlanChannel, 'members' | 'joins' | 'creator' | 'topics'> & { members: number[]; fixed: Set<number> };
  const drafts: Draft[] = [];
  const usedNames = new Set<string>();
  const add = (d: Omit<Draft, 'idx'>) => {
    let name = d.name;
    for (let n = 2; usedNames.has(name); n++) name = `${d.name}-${n}`;
    usedNames.add(name);
    drafts.push({ ...d, name, idx: drafts.length });
  };
  add({
    name: 'general',
    kind: 'public',
    tag: 'general',
    share: scale.generalShare,
    members: users.map((u) => u.idx),
    fixed: new Set([0]),
  });
  add({
    name: 'engineering',
    kind: 'public',
    tag: 'channel100',
    share: scale.channel100Share,
    members: pickMembers(100, [0, reader, poster]),
    fixed: new Set([reader, poster]),
  });
  const bigNames = ['all-hands', 'customer-support', 'product'];
  scale.big.forEach(([subs, share], i) =>
    add({
      name: bigNames[i] ?? `big-${i}`,
      kind: 'public',
      tag: 'big',
      share,
      members: pickMembers(subs, [reader]),
      fixed: new Set([reader]),
    }),
  );
  add({
    name: 'bench-events',
    kind: 'public',
    tag: 'events',
    share: 0,
    members: [eventSender, eventReceiver],
    fixed: new Set([eventSender, eventReceiver]),
  });

  const teamCount = scale.channels - drafts.length;
  const words = TEAM_WORDS;
  const [minSize, maxSize] = scale.teamSize;
  const sizes = Array.from({ length: teamCount }, () =>
    Math.round(Math.exp(Math.log(minSize) + rng.next() * (Math.log(maxSize) - Math.log(minSize)))),
  );
  // Busy channels tend to be small teams: rank traffic by size, with noise.
  const order = sizes
    .map((s, i) => ({ i, key: Math.log(s) + (rng.next() + rng.next() + rng.next() - 1.5) * 3 }))
    .sort((a, b) => a.key - b.key);
  // Many channels are rarely used: a third of them dormant, with 2% of the traffic their rank would give.
  const teamWeights = zipfWeights(teamCount, scale.teamTrafficZipf, 3).map((w, rank) => (rank > 2 && rng.chance(0.33) ? w * 0.02 : w));
  const teamTotal = teamWeights.reduce((a, b) => a + b, 0);
  const fixedShare = drafts.reduce((a, d) => a + d.share, 0);
  const teamShare = 1 - scale.dmShare - fixedShare;
  const teamShares = new Array<number>(teamCount);
  order.forEach((o, rank) => (teamShares[o.i] = (teamWeights[rank]! / teamTotal) * teamShare));
  for (let i = 0; i < teamCount; i++) {
    const r = rng.next();
    const kind: ChannelKind = r < 0.7 ? 'public' : r < 0.88 ? 'private-shared' : 'private-protected';
    const name = `${words[i % words.length]}${kind === 'public' ? '' : '-private'}${i >= words.length ? `-${Math.floor(i / words.length) + 1}` : ''}`;
    add({ name, kind, tag: 'team', share: teamShares[i]!, members: pickMembers(sizes[i]!, []), fixed: new Set() });
  }
  const teams = drafts.filter((d) => d.tag === 'team');
  const byShare = [...teams].sort((a, b) => b.share - a.share);
  // The reader reads the three busiest team channels and the two quietest public ones.
  const publicTeams = byShare.filter((d) => d.kind === 'public');
  for (const d of [...byShare.slice(0, 3), ...publicTeams.slice(-2)]) {
    if (!d.members.includes(reader)) d.members.push(reader);
    d.fixed.add(reader);
  }
  // Each lurker follows public team channels until its share of all messages is reached: all unread.
  scale.lurkerUnreadShares.forEach((target, i) => {
    const lurker = lurkers[i]!;
    let acc = scale.generalShare;
    for (const d of publicTeams) {
      if (acc + d.share > target * 1.15) continue;
      d.members.push(lurker);
      d.fixed.add(lurker);
      acc += d.share;
      if (acc >= target * 0.9) break;
    }
  });

  // Join fractions: the later of the user's arrival and, for 30% of subscriptions, a join mid-history.
  const topicWords = vocabulary(300);
  const channels: PlanChannel[] = drafts.map((d) => {
    const creator =
      d.members.find((m) => users[m]!.role !== Role.GUEST && !users[m]!.lurker && (d.fixed.has(m) || users[m]!.orgJoin === 0)) ?? 0;
    const joined = d.members.map((m) => {
      const pinned = m === creator || d.fixed.has(m) || d.tag === 'events';
      const join = pinned ? 0 : Math.max(users[m]!.orgJoin, d.tag === 'general' || !rng.chance(0.3) ? 0 : rng.next());
      return { m, join };
    });
    joined.sort((a, b) => a.join - b.join || a.m - b.m);
    const expected = d.share * scale.messages;
    const topicCount = Math.max(1, Math.min(5000, Math.round(expected / 30)));
    const topics: string[] = [];
    const seen = new Set<string>();
    while (topics.length < topicCount) {
      const a = rng.pick(topicWords);
      const b = rng.pick(topicWords);
      let t = rng.chance(0.5) ? `${a[0]!.toUpperCase()}${a.slice(1)} ${b}` : `${a} ${b}`;
      if (rng.chance(0.15)) t += ` #${rng.int(1, 9999)}`;
      if (seen.has(t.toLowerCase())) t += ` ${topics.length}`;
      seen.add(t.toLowerCase());
      topics.push(t.slice(0, 60));
    }
    return {
      idx: d.idx,
      name: d.name,
      kind: d.kind,
      tag: d.tag,
      share: d.share,
      members: joined.map((j) => j.m),
      joins: joined.map((j) => j.join),
      creator,
      topics,
    };
  });

  // DM conversations: 1:1 mostly, 10% of three; the reader is in a few.
  const dms: PlanDm[] = [];
  const seenDm = new Set<string>();
  const talkers = users.filter((u) => !u.lurker);
  const talkerSampler = new WeightedSampler(talkers.map((u) => 0.05 + u.activity));
  let guard = 0;
  while (dms.length < scale.dmConversations && guard++ < scale.dmConversations * 50) {
    const size = rng.chance(0.1) ? 3 : 2;
    const set = new Set<number>(dms.length < 5 ? [reader] : []);
    while (set.size < size) set.add(talkers[talkerSampler.sample(rng)]!.idx);
    const members = [...set].sort((a, b) => a - b);
    const key = members.join(',');
    if (seenDm.has(key)) continue;
    seenDm.add(key);
    dms.push({ members });
  }
  const dmWeights = rng.shuffle(zipfWeights(dms.length, 1.0));

  let expectedUserMessages = 0;
  for (const c of channels) expectedUserMessages += c.share * scale.messages * c.joins.reduce((a, j) => a + (1 - j), 0);
  const dmTotal = dmWeights.reduce((a, b) => a + b, 0);
  dms.forEach((d, i) => (expectedUserMessages += (dmWeights[i]! / dmTotal) * scale.dmShare * scale.messages * d.members.length));
  return { scale, users, channels, dms, dmWeights, reader, poster, eventSender, eventReceiver, lurkers, expectedUserMessages };
}

function printPlan(plan: Plan): void {
  const { scale, channels } = plan;
  const subs = channels.reduce((a, c) => a + c.members.length, 0);
  const big = channels.filter((c) => c.members.length >= 100).map((c) => `${c.name}(${c.members.length})`);
  const kinds = (k: ChannelKind) => channels.filter((c) => c.kind === k).length;
  const quiet = channels.filter((c) => c.share * scale.messages < 100).length;
  const top = [...channels]
    .sort((a, b) => b.share - a.share)
    .slice(0, 5)
    .map((c) => `${c.name} ${(c.share * 100).toFixed(1)}% (${c.members.length} subs)`);
  process.stderr.write(
    `plan ${scale.name}: ${fmtInt(scale.users)} users, ${channels.length} channels ` +
      `(${kinds('public')} public, ${kinds('private-shared')} private with shared history, ${kinds('private-protected')} protected), ` +
      `${fmtInt(subs)} subscriptions (${(subs / scale.users).toFixed(1)} a user), ${plan.dms.length} DM conversations\n` +
      `  100+ subscribers: ${big.join(', ')}; ${quiet} channels expect fewer than 100 messages\n` +
      `  busiest: ${top.join('; ')}\n` +
      `  ${fmtInt(scale.messages)} messages, about ${fmtInt(plan.expectedUserMessages)} user_messages rows ` +
      `(${(plan.expectedUserMessages / scale.messages).toFixed(1)} a message)\n`,
  );
}

// ---------------------------------------------------------------- the database

async function prepareDatabase(target: Target): Promise<void> {
  fs.mkdirSync(target.dir, { recursive: true });
  for (const f of ['manifest.json', 'credentials.json']) fs.rmSync(path.join(target.dir, f), { force: true });
  if (target.db === 'sqlite') {
    for (const f of ['parley.sqlite3', 'parley.sqlite3-wal', 'parley.sqlite3-shm']) fs.rmSync(path.join(target.dir, f), { force: true });
    return;
  }
  const { database: _server, ...server } = mysqlConnectionOptions(target.databaseUrl!);
  const conn = await createConnection(server);
  const name = target.databaseName!;
  if (!/^parley[A-Za-z0-9_]*$/.test(name))
    throw new Error(`refusing to recreate database ${name}: bench databases are named parley_bench_*`);
  await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await conn.end();
}

interface Ids {
  users: number[];
  userRows: UserRow[];
  channelIds: number[];
  channelRecipients: number[];
  dmRecipients: number[];
  realmId: number;
}

async function createOrganization(target: Target, plan: Plan, times: Record<string, number>): Promise<Ids> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    let t0 = Date.now();
    await migrateLatest(db);
    times.migrate = (Date.now() - t0) / 1000;

    t0 = Date.now();
    const realmId = await doCreateRealm(db, {
      stringId: '',
      name: `Parley bench ${plan.scale.name}`,
      description: 'Benchmark organization.',
    });
    const userRows: UserRow[] = [];
    const progress = new Progress('users        ', plan.users.length);
    for (let i = 0; i < plan.users.length; i += 100) {
      await inTransaction(db, async (tx) => {
        for (const u of plan.users.slice(i, i + 100)) {
          userRows.push(
            await createUserInTx(tx, null, { realmId, email: u.email, fullName: u.fullName, role: u.role, canCreateUsers: u.idx === 0 }),
          );
        }
      });
      progress.update(userRows.length);
    }
    times.users = progress.finish();

    const chProgress = new Progress('channels     ', plan.channels.length);
    const channelIds: number[] = [];
    const channelRecipients: number[] = [];
    for (const c of plan.channels) {
      const id = await inTransaction(db, (tx) =>
        createChannelInTx(tx, userRows[c.creator]!, {
          name: c.name,
          description: `${c.kind} channel for ${c.name.replace(/-/g, ' ')}`,
          inviteOnly: c.kind !== 'public',
          historyPublicToSubscribers: c.kind !== 'private-protected',
          subscriberIds: c.members.map((m) => userRows[m]!.id),
        }),
      );
      const row = await db('channels').where({ id }).first('recipient_id');
      channelIds.push(id);
      channelRecipients.push(Number(row!.recipient_id));
      chProgress.update(channelIds.length);
    }
    times.channels = chProgress.finish();

    const dmProgress = new Progress('dm groups    ', plan.dms.length);
    const dmRecipients: number[] = [];
    for (let i = 0; i < plan.dms.length; i += 100) {
      await inTransaction(db, async (tx) => {
        for (const d of plan.dms.slice(i, i + 100)) {
          dmRecipients.push(
            (
              await dmGroupRecipient(
                tx,
                d.members.map((m) => userRows[m]!.id),
              )
            ).recipientId,
          );
        }
      });
      dmProgress.update(dmRecipients.length);
    }
    times.dm_groups = dmProgress.finish();

    const creds = await db('users').where({ realm_id: realmId }).orderBy('id').select('id', 'email', 'api_key');
    fs.writeFileSync(
      credentialsPath(target),
      JSON.stringify(
        creds.map((c) => ({ id: Number(c.id), email: c.email, api_key: c.api_key })),
        null,
        1,
      ),
    );
    return { users: userRows.map((u) => u.id), userRows, channelIds, channelRecipients, dmRecipients, realmId };
  } finally {
    await db.destroy();
  }
}

async function maxId(target: Target, table: string): Promise<number> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    const row = await db(table).max({ m: 'id' }).first();
    return Number(row?.m ?? 0);
  } finally {
    await db.destroy();
  }
}

// ---------------------------------------------------------------- messages

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Stats {
  messages: number;
  userMessages: number;
  reactions: number;
  searchMatches: number;
  received: Int32Array;
  unread: Int32Array;
  starred: Int32Array;
  channelMessages: Int32Array;
  topicMessages: Int32Array[];
  firstMessageId: Array<number | null>;
  readerMessageIds: number[];
  /** The newest message sent before the idle users stopped coming (0: no idle users). */
  idleBoundaryId: number;
}

async function loadMessages(
  target: Target,
  plan: Plan,
  ids: Ids,
  sink: BulkSink,
  start: { message: number; reaction: number },
): Promise<Stats> {
  const { scale, users, channels } = plan;
  const rng = new Rng(scale.seed + 1);
  const vocab = vocabulary(3000);
  const wordSampler = new WeightedSampler(zipfWeights(vocab.length, 1.05));
  const targetSampler = new WeightedSampler([...channels.map((c) => c.share), scale.dmShare]);
  const dmSampler = new WeightedSampler(plan.dmWeights);
  const topicSamplers = channels.map((c) => new WeightedSampler(zipfWeights(c.topics.length, 1.0)));
  const emojiSampler = new WeightedSampler(zipfWeights(EMOJI.length, 1.2));
  // Per channel: how many members have joined so far (members are sorted by join), and prefix sums of their activity.
  const active = channels.map(() => 0);
  const activityPrefix = channels.map((c) => {
    const p = new Float64Array(c.members.length + 1);
    c.members.forEach((m, i) => (p[i + 1] = p[i]! + users[m]!.activity));
    return p;
  });
  const lastTopic = channels.map(() => -1);
  const stats: Stats = {
    messages: 0,
    userMessages: 0,
    reactions: 0,
    searchMatches: 0,
    received: new Int32Array(users.length),
    unread: new Int32Array(users.length),
    starred: new Int32Array(users.length),
    channelMessages: new Int32Array(channels.length),
    topicMessages: channels.map((c) => new Int32Array(c.topics.length)),
    firstMessageId: channels.map(() => null),
    readerMessageIds: [],
    idleBoundaryId: 0,
  };
  const idleSince = scale.idleShare ? (scale.idleSince ?? 1) : 1;
  const M = scale.messages;
  const now = Math.floor(Date.now() / 1000);
  const span = 2 * 365 * 86400;
  const t0 = now - span;
  let messageId = start.message;
  let reactionId = start.reaction;

  const userMessageFlags = (u: number, f: number, isSender: boolean, mentioned: boolean, wildcard: boolean, base: number) => {
    const p = users[u]!;
    let flags = base;
    if (isSender) flags |= READ;
    else if (!p.lurker && (f < p.readHorizon ? !rng.chance(0.0005) : rng.chance(p.readAfter))) flags |= READ;
    if (rng.chance(p.starRate)) flags |= STARRED;
    if (mentioned) flags |= MENTIONED;
    if (wildcard) flags |= STREAM_WILDCARD;
    stats.received[u]!++;
    if (!(flags & READ)) stats.unread[u]!++;
    if (flags & STARRED) stats.starred[u]!++;
    return flags;
  };

  const content = (mention: PlanUser | null, wildcard: boolean): { content: string; html: string } => {
    const n = Math.min(120, 3 + Math.floor(-Math.log(1 - rng.next()) * 12));
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(vocab[wordSampler.sample(rng)]!);
    words[0] = words[0]![0]!.toUpperCase() + words[0]!.slice(1);
    const text = words.join(' ') + (rng.chance(0.2) ? '?' : '.');
    if (words.some((w) => w.toLowerCase() === SEARCH_WORD)) stats.searchMatches++;
    if (mention) {
      return {
        content: `@**${mention.fullName}** ${text}`,
        html: `<p><span class="user-mention" data-user-id="${ids.users[mention.idx]}">@${escapeHtml(mention.fullName)}</span> ${escapeHtml(text)}</p>`,
      };
    }
    if (wildcard) {
      return {
        content: `@**all** ${text}`,
        html: `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span> ${escapeHtml(text)}</p>`,
      };
    }
    return { content: text, html: `<p>${escapeHtml(text)}</p>` };
  };

  const buildBatch = (count: number): TableRows[] => {
    const messages: Value[][] = [];
    const userMessages: Value[][] = [];
    const sparseRows: Value[][][] = SPARSE_FLAGS.map(() => []);
    const unreadRows: Value[][] = [];
    const reactions: Value[][] = [];
    const searchRows: Value[][] = [];
    const receiverRows: Value[][] = [];
    for (let k = 0; k < count; k++) {
      const i = stats.messages++;
      const f = i / M;
      const id = messageId++;
      const which = targetSampler.sample(rng);
      let sender: number;
      let recipientId: number;
      let topic = '';
      let receivers: number[];
      let base = 0;
      let mention: PlanUser | null = null;
      let wildcard = false;
      if (which < channels.length) {
        const c = channels[which]!;
        while (active[which]! < c.members.length && c.joins[active[which]!]! <= f) active[which]!++;
        if (active[which] === 0) active[which] = 1;
        const n = active[which]!;
        const prefix = activityPrefix[which]!;
        if (prefix[n]! > 0) {
          const x = rng.next() * prefix[n]!;
          let lo = 0;
          let hi = n - 1;
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (prefix[mid + 1]! > x) hi = mid;
            else lo = mid + 1;
          }
          sender = c.members[lo]!;
        } else {
          sender = c.creator;
        }
        receivers = c.members.slice(0, n);
        // Idle users no longer send: someone still coming does (the channel's first such member).
        if (f > idleSince && users[sender]!.idle) sender = receivers.find((m) => !users[m]!.idle) ?? sender;
        if (!receivers.includes(sender)) receivers.push(sender);
        recipientId = ids.channelRecipients[which]!;
        const topicIdx = lastTopic[which]! >= 0 && rng.chance(0.5) ? lastTopic[which]! : topicSamplers[which]!.sample(rng);
        lastTopic[which] = topicIdx;
        topic = c.topics[topicIdx]!;
        stats.channelMessages[which]!++;
        stats.topicMessages[which]![topicIdx]!++;
        if (stats.firstMessageId[which] === null) stats.firstMessageId[which] = id;
        if (rng.chance(0.03) && n > 1) {
          const m = receivers[rng.int(0, receivers.length - 1)]!;
          if (m !== sender) mention = users[m]!;
        } else if (n <= 15 && rng.chance(0.002)) {
          wildcard = true;
        }
      } else {
        const di = dmSampler.sample(rng);
        const d = plan.dms[di]!;
        receivers = d.members;
        sender = rng.pick(d.members);
        if (f > idleSince && users[sender]!.idle) sender = d.members.find((m) => !users[m]!.idle) ?? sender;
        recipientId = ids.dmRecipients[di]!;
        base = IS_PRIVATE;
      }
      const body = content(mention, wildcard);
      messages.push([
        id,
        ids.realmId,
        ids.users[sender]!,
        recipientId,
        1,
        topic,
        topic.toLowerCase(),
        body.content,
        body.html,
        1,
        t0 + Math.floor((i * span) / M),
        rng.chance(0.8) ? 'website' : 'ZulipMobile',
        0,
        0,
        0,
        0,
      ]);
      // The search index rows sendMessageInTx would write (migration 021).
      for (const term of messageSearchTerms(topic, body.content)) searchRows.push([term, id]);
      if (f <= idleSince) stats.idleBoundaryId = id;
      let written = 0;
      const holders: number[] = [];
      for (const u of receivers) {
        let flags: number;
        if (f > idleSince && users[u]!.idle && u !== sender) {
          // An idle user reads nothing; a channel send leaves out their row unless its flags need one (ADR 0058).
          flags = base | (mention?.idx === u ? MENTIONED : 0) | (wildcard ? STREAM_WILDCARD : 0);
          if (flags === 0) continue;
          stats.received[u]!++;
          stats.unread[u]!++;
        } else {
          flags = userMessageFlags(u, f, u === sender, mention?.idx === u, wildcard, base);
        }
        written++;
        holders.push(ids.users[u]!);
        userMessages.push([ids.users[u]!, id, flags]);
        // The side tables of the sparse flags, as insertUserMessages and the flag updates keep them.
        SPARSE_FLAGS.forEach((sf, k) => {
          if ((flags & sf.mask) !== 0) sparseRows[k]!.push([ids.users[u]!, id]);
        });
        // The unread side table, as migration 026 leaves it: every unread row (the horizons are set after the load).
        if ((flags & READ) === 0) unreadRows.push([ids.users[u]!, id]);
        if (u === plan.reader) stats.readerMessageIds.push(id);
      }
      stats.userMessages += written;
      // Who holds a row, as a send lists them (migration 049).
      if (holders.length) receiverRows.push([id, holders.join(',')]);
      if (rng.chance(0.05)) {
        const n = rng.int(1, 3);
        const seen = new Set<string>();
        for (let r = 0; r < n; r++) {
          const u = receivers[rng.int(0, receivers.length - 1)]!;
          const [name, code] = EMOJI[emojiSampler.sample(rng)]!;
          if (f > idleSince && users[u]!.idle) continue; // idle users react to nothing
          const key = `${u}:${code}`;
          if (seen.has(key)) continue;
          seen.add(key);
          reactions.push([reactionId++, id, ids.users[u]!, name, code, 'unicode_emoji']);
        }
      }
    }
    stats.reactions += reactions.length;
    return [
      {
        table: 'messages',
        columns: [
          'id',
          'realm_id',
          'sender_id',
          'recipient_id',
          'type',
          'topic',
          'topic_key',
          'content',
          'rendered_content',
          'rendered_content_version',
          'date_sent',
          'sending_client',
          'is_me_message',
          'has_attachment',
          'has_image',
          'has_link',
        ],
        rows: messages,
      },
      // No id: on MariaDB the table is keyed by (user_id, message_id) (migration 024).
      { table: 'user_messages', columns: ['user_id', 'message_id', 'flags'], rows: userMessages },
      { table: 'message_receivers', columns: ['message_id', 'user_ids'], rows: receiverRows },
      ...SPARSE_FLAGS.map((sf, k) => ({ table: sf.table, columns: ['user_id', 'message_id'], rows: sparseRows[k]! })),
      { table: UNREAD_TABLE, columns: ['user_id', 'message_id'], rows: unreadRows },
      { table: 'reactions', columns: ['id', 'message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type'], rows: reactions },
      { table: 'message_search_terms', columns: ['term', 'message_id'], rows: searchRows },
    ];
  };

  const progress = new Progress('messages     ', M);
  let pending: Promise<void> | null = null;
  while (stats.messages < M) {
    const batch = buildBatch(Math.min(scale.batch, M - stats.messages));
    if (pending) await pending;
    progress.update(stats.messages, `user_messages ${fmtInt(stats.userMessages)}`);
    pending = sink.write(batch);
  }
  if (pending) await pending;
  progress.finish(`user_messages ${fmtInt(stats.userMessages)}, reactions ${fmtInt(stats.reactions)}`);
  return stats;
}

/**
 * As the daily job leaves users who stopped coming at idleSince (ADR 0058):
 * idle, their last active message the newest one then, their subscriptions
 * idle (keeping no rows: the default settings notify of no channel), their
 * last visit then; everyone else visited now.
 */
async function markIdleUsers(db: ReturnType<typeof createDb>, plan: Plan, ids: Ids, stats: Stats): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await db('users').where({ realm_id: ids.realmId }).update({ last_visit_time: now });
  const idle = plan.users.filter((u) => u.idle).map((u) => ids.users[u.idx]!);
  if (idle.length === 0) return;
  const leftAt = now - Math.round((1 - (plan.scale.idleSince ?? 1)) * 2 * 365 * 86400);
  for (let i = 0; i < idle.length; i += 1000) {
    const slice = idle.slice(i, i + 1000);
    await db('users')
      .whereIn('id', slice)
      .update({ long_term_idle: true, last_active_message_id: stats.idleBoundaryId, last_visit_time: leftAt });
    await db('subscriptions').whereIn('user_id', slice).update({ is_user_long_term_idle: true, idle_keeps_rows: false });
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const target = resolveTarget();
  const plan = makePlan(target.scale);
  printPlan(plan);
  if (process.env.BENCH_PLAN_ONLY) return;
  const started = Date.now();
  const times: Record<string, number> = {};
  process.stderr.write(
    `generating ${target.scale.name} on ${target.db}${target.databaseName ? ` (${target.databaseName})` : ` (${target.dataDir})`}\n`,
  );
  await prepareDatabase(target);
  const ids = await createOrganization(target, plan, times);

  const start = {
    message: (await maxId(target, 'messages')) + 1,
    reaction: (await maxId(target, 'reactions')) + 1,
  };
  let t0 = Date.now();
  const sink = target.db === 'sqlite' ? sqliteSink(path.join(target.dataDir, 'parley.sqlite3')) : await mysqlSink(target.databaseUrl!);
  let stats: Stats;
  try {
    stats = await loadMessages(target, plan, ids, sink, start);
  } finally {
    await sink.close();
  }
  times.messages = (Date.now() - t0) / 1000;

  t0 = Date.now();
  let migrations: string[];
  let settled: SettleReport | null = null;
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    for (let c = 0; c < plan.channels.length; c++) {
      const first = stats.firstMessageId[c];
      if (first !== null && first !== undefined) await db('channels').where({ id: ids.channelIds[c] }).update({ first_message_id: first });
    }
    // Every user's unread horizon at the newest message, as migration 026 leaves an upgraded database.
    const newest = await db('messages').max({ id: 'id' }).first();
    await db('unread_horizons').del();
    await db.raw('INSERT INTO unread_horizons (user_id, message_id) SELECT id, ? FROM users', [Number(newest?.id ?? 0)]);
    // The channels' topic rows, which the sends would have kept (migration 047).
    await rebuildAllTopicSummaries(db);
    await markIdleUsers(db, plan, ids, stats);
    migrations = (await db('knex_migrations').orderBy('id').pluck('name')).map(String);
    times.finish = (Date.now() - t0) / 1000;
    // What the database would otherwise do in the first minutes of the run (statistics, writing
    // the load's pages, purge), done now: src/db/settle.ts. BENCH_SETTLE=0 leaves it, to measure
    // what a freshly loaded database costs.
    if (process.env.BENCH_SETTLE !== '0') {
      t0 = Date.now();
      const adminUrl = target.db === 'mariadb' ? process.env.BENCH_MYSQL_ADMIN_URL : undefined;
      const admin = adminUrl ? createDb({ databaseUrl: adminUrl, dataDir: target.dataDir, dbPoolMax: 1 }) : undefined;
      try {
        settled = await settleAfterBulkLoad(db, { admin, progress: (line) => process.stderr.write(`  ${line}\n`) });
      } catch (err) {
        // The load itself is sound: keep it (the manifest records that it was not settled).
        process.stderr.write(`  settling failed, the dataset is kept unsettled: ${err instanceof Error ? err.message : String(err)}\n`);
      } finally {
        await admin?.destroy();
      }
      times.settle = (Date.now() - t0) / 1000;
    }
  } finally {
    await db.destroy();
  }
  times.total = (Date.now() - started) / 1000;

  // Scenario targets.
  const { channels } = plan;
  const readerChannels = channels.filter((c) => c.members.includes(plan.reader) && c.tag === 'team');
  const busy = [...readerChannels].sort((a, b) => stats.channelMessages[b.idx]! - stats.channelMessages[a.idx]!)[0]!;
  const busyTopics = stats.topicMessages[busy.idx]!;
  let busyTopic = 0;
  busyTopics.forEach((n, i) => (n > busyTopics[busyTopic]! ? (busyTopic = i) : 0));
  const rare = readerChannels
    .filter((c) => c.kind === 'public' && stats.channelMessages[c.idx]! > 0)
    .sort((a, b) => stats.channelMessages[a.idx]! - stats.channelMessages[b.idx]!)[0]!;
  const ch100 = channels.find((c) => c.tag === 'channel100')!;
  const events = channels.find((c) => c.tag === 'events')!;
  const lurker = plan.lurkers[0]!;
  const ref = (u: number) => ({ id: ids.users[u]!, email: plan.users[u]!.email });
  const readerIds = stats.readerMessageIds;
  const manifest: Manifest = {
    version: MANIFEST_VERSION,
    scale: target.scale.name,
    db: target.db,
    databaseName: target.databaseName,
    generatedAt: new Date().toISOString(),
    loadSeconds: times,
    settled,
    counts: {
      users: plan.users.length,
      channels: channels.length,
      subscriptions: channels.reduce((a, c) => a + c.members.length, 0),
      dm_conversations: plan.dms.length,
      messages: stats.messages,
      user_messages: stats.userMessages,
      reactions: stats.reactions,
      unread_total: stats.unread.reduce((a, b) => a + b, 0),
      starred_total: stats.starred.reduce((a, b) => a + b, 0),
    },
    migrations,
    maxMessageId: start.message + stats.messages - 1,
    realmId: ids.realmId,
    targets: {
      reader: ref(plan.reader),
      lurker: ref(lurker),
      lurkers: plan.lurkers.map(ref),
      lurkerUnread: stats.unread[lurker]!,
      poster: ref(plan.poster),
      eventSender: ref(plan.eventSender),
      eventReceiver: ref(plan.eventReceiver),
      eventChannel: { id: ids.channelIds[events.idx]!, name: events.name },
      channel100: { id: ids.channelIds[ch100.idx]!, name: ch100.name, subscribers: ch100.members.length },
      busyChannel: { id: ids.channelIds[busy.idx]!, name: busy.name, messages: stats.channelMessages[busy.idx]! },
      busyTopic: { name: busy.topics[busyTopic]!, messages: busyTopics[busyTopic]! },
      rareChannel: { id: ids.channelIds[rare.idx]!, name: rare.name, messages: stats.channelMessages[rare.idx]! },
      midAnchor: readerIds[Math.floor(readerIds.length / 2)] ?? start.message,
      searchWord: SEARCH_WORD,
      searchMatches: stats.searchMatches,
      readerStarred: stats.starred[plan.reader]!,
      readerMessages: stats.received[plan.reader]!,
    },
    ...(stats.idleBoundaryId && plan.scale.idleShare
      ? {
          idle: {
            users: plan.users.filter((u) => u.idle).length,
            lastActiveMessageId: stats.idleBoundaryId,
            announcement: { id: ids.channelIds[channels.find((c) => c.tag === 'general')!.idx]!, name: 'general' },
          },
        }
      : {}),
  };
  fs.writeFileSync(manifestPath(target), JSON.stringify(manifest, null, 2) + '\n');
  const rate = stats.userMessages / times.messages;
  process.stderr.write(
    `done in ${times.total.toFixed(1)} s (messages phase ${times.messages.toFixed(1)} s, ${fmtInt(rate)} user_messages rows/s); ` +
      `lurker unread ${fmtInt(manifest.targets.lurkerUnread)}, reader ${fmtInt(manifest.targets.readerMessages)} messages\n` +
      `manifest: ${manifestPath(target)}\n`,
  );
}

runMain(main);
