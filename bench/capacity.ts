/**
 * Capacity on paper (bench/capacity.md). Reads the per-request CPU that the
 * committed benchmark results measured, applies a stated model of Zulip-like
 * traffic, and prints as markdown the tables capacity.md holds: peak
 * requests per second by operation, Parley and database cores, Parley nodes,
 * the single Galera writer's load, and where that writer stops.
 *
 *   npx tsc -p bench/tsconfig.json && node dist/bench/capacity.js
 *   node dist/bench/capacity.js 1m=bench/results/<file>.md partial=… cluster=… longpoll=… web=…
 *
 * Without arguments each input is the newest file of its kind in
 * bench/results/ (names start with the date). Nothing is measured here:
 * every figure comes from a results file or from a named assumption below.
 *
 * A partial 1m run (…-1m-mariadb-<name>.md: some scenarios only, the same
 * dataset) replaces the full run's rows it has; `partial=none` leaves it out.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const RESULTS = path.join(ROOT, 'bench', 'results');

// ------------------------------------------------------------------ the traffic model
// Rates per active user per working hour, as a team that works in its chat uses it. Each is a
// judgement, not a measurement; the comment says why it has its value, capacity.md says the same.

/** Share of the users with a client open in the peak hour: most staff are in, some are away, part-time, in other time zones, or rarely log in. */
const ACTIVE_AT_PEAK = 0.6;
/** Open clients (each an event queue with its long-poll) per active user: a browser tab or the desktop app, plus a phone in the foreground part of the time. */
const CLIENTS_PER_ACTIVE_USER = 1.5;
/** The busiest hour's user actions ÷ a mean working hour's: the morning, when everyone opens the app and catches up. Timers (presence, heartbeats) do not peak. */
const PEAK_HOUR_FACTOR = 1.5;
/** Messages sent per active user per working hour: about 50 a working day for someone who works in the chat. */
const SENDS_PER_HOUR = 6;
/** GET /messages pages per active user per working hour: each narrow opened (a topic, a channel, a DM) is a fetch, and so is each page scrolled back. */
const PAGES_PER_HOUR = 20;
/** Topic lists (GET /users/me/{id}/topics) per active user per working hour: a channel expanded in the sidebar, "more topics". */
const TOPIC_LISTS_PER_HOUR = 4;
/** Searches per active user per working hour: most users search a few times a day. */
const SEARCHES_PER_HOUR = 1;
/** POST /register per active user per working hour: opening the app, a reload, a phone coming back after its queue expired (10 idle minutes). */
const REGISTERS_PER_HOUR = 1;
/** POST /messages/flags per active user per working hour: clients mark messages read in batches as they scroll past; stars and unread marks are rarer. */
const FLAGS_PER_HOUR = 10;
/** POST /typing per message sent: clients send a start every 10 s while composing and a stop; a message takes 10–30 s to write. */
const TYPING_PER_SEND = 3;
/** Users who receive a message, the sender apart: most messages go to team channels of tens of members or to DMs of one or two, a few to large channels. */
const RECEIVERS_PER_MESSAGE = 30;
/** Seconds between presence pings of one open client (Zulip's apps ping every minute). */
const PRESENCE_INTERVAL_S = 60;
/** Seconds a waiting poll is held before its heartbeat (src/events/manager.ts: 50 s ± 10 %). */
const HEARTBEAT_S = 50;
/** Redis stream entries a send appends: its message event and its cache invalidation (the channel's topic list). */
const STREAM_ENTRIES_PER_SEND = 2;

// ------------------------------------------------------------------ sizing rules (assumed)

/** A Parley node is one Node.js process, so at most one core of JavaScript; it is sized to use this share of it at the peak. */
const NODE_TARGET_UTILISATION = 0.6;
/** Cores of the Galera writer's machine (an ordinary database server; the benchmarks ran MariaDB on one of 2 shared cores). */
const WRITER_CORES = 16;
/** The writer is sized like the nodes: this share of its cores at the peak. */
const WRITER_TARGET_UTILISATION = 0.6;
/**
 * Appends one Redis process takes per second: not measured. Assumed at half of
 * 1e6 ÷ the cheapest Parley request's µs (GET /users/me, which authenticates and
 * encodes an answer: more work than an append); printed with the figure it came from.
 */
const REDIS_APPEND_SHARE_OF_CHEAPEST_REQUEST = 0.5;
/**
 * The measured scenario (a name prefix in the 1m results) that stands in for POST /typing and POST
 * /users/me/presence, which have no load scenario. Each authenticates and runs a few small indexed
 * reads (typing: the receivers; presence: four reads, a write a minute); the cheapest GET /messages
 * does as much and also renders 24 messages, so it overcounts them.
 */
const SMALL_REQUEST_STAND_IN = 'GET /messages rarely used channel';
/**
 * The stand-in for a GET /events poll and for a node's read of one stream entry, neither measured:
 * an authenticated request that reads no row and encodes a small answer.
 */
const POLL_STAND_IN = 'GET /users/me';
/**
 * Used only when no 1m results file has a POST /register row: the web client's latency for it
 * (not CPU) is the cost, and this share of it counts as Parley CPU, the rest as database CPU.
 */
const REGISTER_SERVER_SHARE = 0.5;
/** Organization sizes of the table. */
const SIZES = [1_000, 10_000, 100_000];
/** Users in the sharding example: many organizations, none larger than a shard group. */
const SHARDED_USERS = 1_000_000;

// ------------------------------------------------------------------ reading results files

type Kind = '1m' | 'partial' | 'cluster' | 'longpoll' | 'web';
const PATTERNS: Record<Kind, RegExp> = {
  '1m': /^\d{4}-\d\d-\d\d-1m-mariadb\.md$/,
  partial: /^\d{4}-\d\d-\d\d-1m-mariadb-[\w-]+\.md$/,
  cluster: /^\d{4}-\d\d-\d\d-cluster\.md$/,
  longpoll: /^\d{4}-\d\d-\d\d-longpoll\.md$/,
  web: /^\d{4}-\d\d-\d\d-web-client\.md$/,
};

/** The input files: the newest of each kind, or the one an argument names; `partial=none` leaves the partial run out. */
function inputFiles(argv: string[]) {
  const newest = (re: RegExp) => {
    const name = fs
      .readdirSync(RESULTS)
      .filter((f) => re.test(f))
      .sort()
      .pop();
    return name && path.join(RESULTS, name);
  };
  const files: Partial<Record<Kind, string>> = {};
  for (const kind of Object.keys(PATTERNS) as Kind[]) files[kind] = newest(PATTERNS[kind]);
  for (const arg of argv) {
    const [key, file] = arg.split('=', 2) as [string, string | undefined];
    if (!file || !(key in PATTERNS)) throw new Error(`argument ${arg}: expected 1m=, partial=, cluster=, longpoll= or web= and a file`);
    files[key as Kind] = key === 'partial' && file === 'none' ? undefined : path.resolve(file);
  }
  /** A file the figures need (the partial run and the web client's are optional). */
  const need = (kind: Kind) => {
    const file = files[kind];
    if (!file) throw new Error(`no results file matching ${PATTERNS[kind]} in ${RESULTS}`);
    return file;
  };
  return { files, need };
}

/** Every markdown table row of a file, as trimmed cells. */
function tableRows(file: string): string[][] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) =>
      l
        .slice(1, l.trimEnd().endsWith('|') ? l.trimEnd().length - 1 : undefined)
        .split('|')
        .map((c) => c.trim()),
    );
}

/** The first number in a cell: "1,303" → 1303, "529 / 839 / 842 ms" → 529. */
function firstNumber(cell: string): number {
  const m = /-?[\d,]+(\.\d+)?/.exec(cell);
  if (!m) throw new Error(`no number in "${cell}"`);
  return Number(m[0].replace(/,/g, ''));
}
/** Every number in a cell, in order. */
const numbers = (cell: string) => [...cell.matchAll(/[\d,]+(\.\d+)?/g)].map((m) => Number(m[0].replace(/,/g, '')));

function row(rows: string[][], file: string, what: string, test: (cells: string[]) => boolean): string[] {
  const found = rows.find(test);
  if (!found) throw new Error(`${path.basename(file)}: no row for ${what}`);
  return found;
}

/** A scenario of a `make bench` results file: its rate and CPU per request ("103% · 612 µs" → 612). */
interface Scenario {
  name: string;
  rps: number;
  serverUs: number;
  dbUs: number;
  /** Set on a partial run's row: where it comes from and how it was scaled. */
  note?: string;
}

/** The scenario table of a 1m results file, its Express baseline and its dataset. */
function readScenarios(file: string) {
  const rows = tableRows(file);
  const header = row(rows, file, 'the scenario header', (c) => c[0] === 'scenario' && c.includes('server CPU'));
  const col = (name: string) => header.indexOf(name);
  const us = (cell: string) => (/µs/.test(cell) ? firstNumber(cell.split('·')[1] ?? '') : 0);
  const scenarios = rows
    .filter((c) => c.length === header.length && c[0] !== 'scenario' && !/^:?-+:?$/.test(c[0] ?? ''))
    .map((c): Scenario => ({
      name: c[0]!,
      rps: firstNumber(c[col('req/s')]!),
      serverUs: us(c[col('server CPU')]!),
      dbUs: us(c[col('DB CPU')]!),
    }));
  const express = scenarios.find((s) => s.name.startsWith('baseline: Express'));
  if (!express) throw new Error(`${path.basename(file)}: no row for the Express baseline`);
  return { scenarios, express, dataset: row(rows, file, 'the dataset', (c) => c[0] === 'dataset')[1]! };
}

/**
 * A scenario's stable title: up to its first ", " or " (". What follows holds counts of the dataset
 * ("the busiest channel (93,536 msgs)", "newest (100)"), which a run may word differently.
 */
const titleKey = (name: string) => name.split(/, | \(/, 1)[0]!;

/**
 * The full 1m run's scenarios with a partial run's rows in place of the same scenarios, and the
 * partial run's other rows added. Rows match by titleKey when that names one row in each file, by
 * the whole title otherwise (two sends to the same channel share a key).
 *
 * The partial run may have run on a faster or slower machine. Its CPU per request, Parley's and the
 * database's alike, is multiplied by the full run's Express µs ÷ its own, which puts it on the full
 * run's footing. The Express baseline measures a Node.js process only; the database shared the same
 * cores, so the same factor is applied to it.
 */
function withPartial(full: ReturnType<typeof readScenarios>, file: string, partial: ReturnType<typeof readScenarios>) {
  if (partial.dataset !== full.dataset)
    throw new Error(`${path.basename(file)}: another dataset than the full 1m run's (partial=none leaves it out)`);
  const factor = full.express.serverUs / partial.express.serverUs;
  const note = `${path.relative(ROOT, file)}, CPU × ${fmt(factor, 2)}`;
  const over = partial.scenarios
    .filter((p) => p.serverUs > 0 && !p.name.startsWith('baseline:'))
    .map((p): Scenario => ({ ...p, serverUs: p.serverUs * factor, dbUs: p.dbUs * factor, note }));
  const keyed = (list: Scenario[], key: string) => list.filter((s) => titleKey(s.name) === key).length;
  const same = (a: Scenario, b: Scenario) =>
    a.name === b.name ||
    (titleKey(a.name) === titleKey(b.name) &&
      keyed(full.scenarios, titleKey(a.name)) === 1 &&
      keyed(partial.scenarios, titleKey(a.name)) === 1);
  return {
    scenarios: [
      ...full.scenarios.map((s) => over.find((p) => same(s, p)) ?? s),
      ...over.filter((p) => !full.scenarios.some((s) => same(s, p))),
    ],
    partial: { file, expressUs: partial.express.serverUs, factor, rows: over.map((p) => p.name) },
  };
}

function readBench(file: string, partialFile: string | undefined) {
  const full = readScenarios(file);
  const merged = partialFile ? withPartial(full, partialFile, readScenarios(partialFile)) : undefined;
  const scenarios = merged?.scenarios ?? full.scenarios;
  const find = (test: (name: string) => boolean) => scenarios.find((s) => test(s.name));
  const scenario = (what: string, test: (name: string) => boolean): Scenario => {
    const found = find(test);
    if (!found) throw new Error(`${path.basename(file)}: no row for ${what}`);
    return found;
  };
  // The six narrows a reader opens; search and the topic list are operations of their own.
  const narrows = scenarios.filter((s) => /^GET \/messages /.test(s.name) && !/search/.test(s.name));
  const mean = (f: (s: Scenario) => number) => narrows.reduce((a, s) => a + f(s), 0) / narrows.length;
  const fromPartial = narrows.filter((s) => s.note).length;
  const p = merged?.partial;
  return {
    express: full.express,
    poll: scenario(POLL_STAND_IN, (n) => n === POLL_STAND_IN),
    // The closed-loop row (its title's key is exactly the path), not the paced one beside it.
    topics: scenario('the topic list', (n) => titleKey(n) === 'GET /users/me/{id}/topics'),
    small: scenario(SMALL_REQUEST_STAND_IN, (n) => n.startsWith(SMALL_REQUEST_STAND_IN)),
    search: scenario('search', (n) => n.startsWith('GET /messages search')),
    // The paced row, not the saturated one: a node at its target runs part-loaded, and per send it costs more then.
    send: scenario('the paced send', (n) => n.startsWith('POST /messages') && n.includes('offered')),
    sendSaturated: scenario('the closed-loop send', (n) => n.startsWith('POST /messages to a 100-subscriber channel')),
    /** Measured CPU of POST /register, if a 1m file has it. */
    register: find((n) => n.startsWith('POST /register')),
    pages: {
      name: `mean of ${narrows.length} GET /messages narrows`,
      rps: mean((s) => s.rps),
      serverUs: mean((s) => s.serverUs),
      dbUs: mean((s) => s.dbUs),
      note: p && fromPartial ? `${fromPartial} of them from ${path.relative(ROOT, p.file)}, CPU × ${fmt(p.factor, 2)}` : undefined,
    } satisfies Scenario,
    partial: p,
    datasetUsers: firstNumber(full.dataset),
  };
}
type Bench = ReturnType<typeof readBench>;
type Longpoll = ReturnType<typeof readLongpoll>;

function readCluster(file: string) {
  const rows = tableRows(file);
  const post = (setup: string) => firstNumber(row(rows, file, `${setup} POST`, (c) => c[0] === setup && c[1]!.startsWith('POST'))[2]!);
  return { twoNodes: post('2 nodes through HAProxy'), oneNode: post('1 node through HAProxy (parley-2 stopped)') };
}

function readLongpoll(file: string) {
  const rows = tableRows(file);
  const header = row(rows, file, 'the header', (c) => c[0] === 'measure' && c.includes('MariaDB'));
  const db = header.indexOf('MariaDB');
  const cell = (what: string, test: (m: string) => boolean) => row(rows, file, what, (c) => test(c[0] ?? ''))[db]!;
  const receivers = firstNumber(cell('events received', (m) => m.startsWith('events received')));
  const lastMs = numbers(cell('send → event', (m) => m.startsWith('send → event')))[2]!;
  const rssStart = firstNumber(cell('RSS at start', (m) => m.startsWith('server RSS / heap at start')));
  const rssPolls = firstNumber(cell('RSS with polls waiting', (m) => m.startsWith('… with') && m.includes('polls waiting')));
  return {
    receivers,
    lastMs,
    /** The send, its rows and every delivery, per receiver: wall time of a node sharing 2 cores, so at most its CPU. */
    usPerDelivery: (lastMs * 1000) / receivers,
    /** RSS a registered queue with its waiting poll adds (before any collection: an upper bound). */
    kbPerClient: ((rssPolls - rssStart) * 1024) / receivers,
  };
}

function readWeb(file: string) {
  const rows = tableRows(file);
  return { registerMs: firstNumber(row(rows, file, 'POST /json/register', (c) => c[0]!.startsWith('POST /json/register: server'))[1]!) };
}

// ------------------------------------------------------------------ the arithmetic

interface Cost {
  serverUs: number;
  dbUs: number;
  from: string;
}
interface Op {
  name: string;
  cost: Cost;
  rate: (t: Traffic) => number;
}
/** The load of an organization at its peak hour, per second. */
interface Traffic {
  users: number;
  active: number;
  clients: number;
  sends: number;
  pages: number;
  topicLists: number;
  searches: number;
  registers: number;
  typing: number;
  flags: number;
  deliveries: number;
  presenceWrites: number;
  streamEntries: number;
}

function traffic(users: number): Traffic {
  const active = users * ACTIVE_AT_PEAK;
  const clients = active * CLIENTS_PER_ACTIVE_USER;
  const perSecond = (perHour: number) => (active * perHour * PEAK_HOUR_FACTOR) / 3600;
  const sends = perSecond(SENDS_PER_HOUR);
  const typing = sends * TYPING_PER_SEND;
  const flags = perSecond(FLAGS_PER_HOUR);
  // A message or typing notice reaches the open clients of its receivers who are active; flags go to the user's own clients.
  const queuesPerMessage = Math.min(RECEIVERS_PER_MESSAGE, users - 1) * ACTIVE_AT_PEAK * CLIENTS_PER_ACTIVE_USER;
  return {
    users,
    active,
    clients,
    sends,
    pages: perSecond(PAGES_PER_HOUR),
    topicLists: perSecond(TOPIC_LISTS_PER_HOUR),
    searches: perSecond(SEARCHES_PER_HOUR),
    registers: perSecond(REGISTERS_PER_HOUR),
    typing,
    flags,
    deliveries: (sends + typing) * queuesPerMessage + flags * CLIENTS_PER_ACTIVE_USER,
    // One row rewrite per active user a minute, whatever the number of their clients (55 s rule, src/actions/presence.ts).
    presenceWrites: active / PRESENCE_INTERVAL_S,
    streamEntries: sends * STREAM_ENTRIES_PER_SEND + typing + flags,
  };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** A rate or count: one decimal under 10, none above. */
const r = (n: number) => fmt(n, n < 10 ? 1 : 0);
/** A percentage: one decimal under 10. */
const pct = (part: number, whole: number) => `${r((100 * part) / whole)} %`;
/** Users, rounded down to two significant figures (a capacity is not known closer). */
const users2 = (n: number) => {
  const step = 10 ** Math.max(0, Math.floor(Math.log10(n)) - 1);
  return Math.floor(n / step) * step;
};

const rel = (f: string) => path.relative(ROOT, f);
const measured = (s: Scenario): Cost => ({
  serverUs: s.serverUs,
  dbUs: s.dbUs,
  from: `measured: ${s.name}${s.note ? ` (${s.note})` : ''}`,
});

/**
 * POST /register: its measured CPU where a 1m file has the row; otherwise the web client's latency
 * for it, split by REGISTER_SERVER_SHARE.
 */
function registerCost(bench: Bench, web: () => { file: string; registerMs: number }): Cost {
  if (bench.register) return measured(bench.register);
  const { file, registerMs } = web();
  return {
    serverUs: registerMs * 1000 * REGISTER_SERVER_SHARE,
    dbUs: registerMs * 1000 * (1 - REGISTER_SERVER_SHARE),
    from: `measured as latency (${fmt(registerMs)} ms, ${rel(file)}), split assumed`,
  };
}

/** The operations with their costs, and the sizing of an organization from them. */
function model(bench: Bench, register: Cost, longpoll: Longpoll, longpollFile: string) {
  const small: Cost = { serverUs: bench.small.serverUs, dbUs: bench.small.dbUs, from: `assumed: as ${bench.small.name}` };
  const ops: Op[] = [
    { name: 'POST /messages (a send)', cost: measured(bench.send), rate: (t) => t.sends },
    { name: 'GET /messages (a page)', cost: measured(bench.pages), rate: (t) => t.pages },
    { name: 'GET /users/me/{id}/topics', cost: measured(bench.topics), rate: (t) => t.topicLists },
    { name: 'GET /messages search', cost: measured(bench.search), rate: (t) => t.searches },
    { name: 'POST /register', cost: register, rate: (t) => t.registers },
    {
      name: 'POST /messages/flags',
      cost: { ...measured(bench.send), from: 'assumed: as a send (a write and an event)' },
      rate: (t) => t.flags,
    },
    { name: 'POST /typing', cost: small, rate: (t) => t.typing },
    { name: 'POST /users/me/presence', cost: small, rate: (t) => t.clients / PRESENCE_INTERVAL_S },
    {
      name: 'GET /events (a poll)',
      cost: { serverUs: bench.poll.serverUs, dbUs: 0, from: `assumed: as ${bench.poll.name} (reads no row)` },
      // A poll ends with its heartbeat or with events, and the client polls again at once.
      rate: (t) => t.clients / HEARTBEAT_S + t.deliveries,
    },
    {
      name: 'an event delivered to a waiting poll',
      cost: {
        serverUs: longpoll.usPerDelivery,
        dbUs: 0,
        from: `measured: ${fmt(longpoll.receivers)} receivers in ${fmt(longpoll.lastMs)} ms (${rel(longpollFile)})`,
      },
      rate: (t) => t.deliveries,
    },
  ];

  // Reading the stream is the per-node tax of one stream: every node reads every entry. Not measured:
  // assumed to cost what the cheapest request does (a decode and a lookup of the receivers' queues).
  const streamReadUs = bench.poll.serverUs;
  const pollsPerNode = longpoll.receivers; // measured: every one of them got the event within the 1 s target

  const size = (users: number) => {
    const t = traffic(users);
    const perOp = ops.map((o) => {
      const rate = o.rate(t);
      return { op: o, rate, cores: (rate * o.cost.serverUs) / 1e6, dbCores: (rate * o.cost.dbUs) / 1e6 };
    });
    const cores = perOp.reduce((a, o) => a + o.cores, 0);
    const dbCores = perOp.reduce((a, o) => a + o.dbCores, 0);
    const streamTax = (t.streamEntries * streamReadUs) / 1e6; // of each node's core
    const nodesForCpu = Math.ceil(cores / (NODE_TARGET_UTILISATION - streamTax));
    const nodesForPolls = Math.ceil(t.clients / pollsPerNode);
    const nodes = Math.max(1, nodesForCpu, nodesForPolls);
    return { t, perOp, cores, dbCores, streamTax, nodesForCpu, nodesForPolls, nodes };
  };
  return { ops, streamReadUs, pollsPerNode, size };
}

/** Users at the writer's usable database CPU: every per-user figure is linear in users above RECEIVERS_PER_MESSAGE. */
const writerCpuCeiling = (big: { t: Traffic; dbCores: number }) => (WRITER_CORES * WRITER_TARGET_UTILISATION * big.t.users) / big.dbCores;

function main(): void {
  const { files, need } = inputFiles(process.argv.slice(2));
  const bench = readBench(need('1m'), files.partial);
  const cluster = readCluster(need('cluster'));
  const longpoll = readLongpoll(need('longpoll'));
  const readWebFile = () => ({ ...readWeb(need('web')), file: need('web') });
  const web = bench.register ? undefined : readWebFile();
  const { ops, streamReadUs, pollsPerNode, size } = model(bench, registerCost(bench, readWebFile), longpoll, need('longpoll'));

  const redisAppendsPerS = (1e6 / bench.poll.serverUs) * REDIS_APPEND_SHARE_OF_CHEAPEST_REQUEST;
  const writerUsableCores = WRITER_CORES * WRITER_TARGET_UTILISATION;

  const sized = SIZES.map(size);
  const head = (first: string) =>
    `| ${first} | ${SIZES.map((s) => `${fmt(s)} users`).join(' | ')} |\n|---|${SIZES.map(() => '---:').join('|')}|`;
  const line = (label: string, f: (s: ReturnType<typeof size>) => string) => `| ${label} | ${sized.map(f).join(' | ')} |`;
  const out: string[] = [];
  const say = (...lines: string[]) => out.push(...lines);

  say(
    '## Inputs',
    '',
    `- ${rel(need('1m'))}: CPU per request, server and database, ${fmt(bench.datasetUsers)} users; Express hello-world ${fmt(bench.express.serverUs)} µs a request in the same run`,
    ...(bench.partial
      ? [
          `- ${rel(bench.partial.file)}: a partial 1m run on the same dataset, ${bench.partial.rows.join('; ')}. Its rows replace the full run's. ` +
            `Its Express hello-world took ${fmt(bench.partial.expressUs)} µs a request, so its CPU per request, Parley's and the database's, is multiplied by ` +
            `${fmt(bench.express.serverUs)} ÷ ${fmt(bench.partial.expressUs)} = ${fmt(bench.partial.factor, 2)} to put it on the full run's footing`,
        ]
      : []),
    `- ${rel(need('cluster'))}: POST /messages through one Galera writer, ${fmt(cluster.twoNodes)} msg/s with two nodes (${fmt(cluster.oneNode)} with one)`,
    `- ${rel(need('longpoll'))}: one send to ${fmt(longpoll.receivers)} waiting polls on one node (MariaDB), the last delivered at ${fmt(longpoll.lastMs)} ms; ${fmt(longpoll.kbPerClient, 1)} KB RSS a waiting client`,
    ...(web ? [`- ${rel(web.file)}: POST /register ${fmt(web.registerMs)} ms on the server (1m dataset, the web client's reader)`] : []),
    '',
    '## The traffic model',
    '',
    '| constant | value |',
    '|---|---:|',
    ...Object.entries({
      ACTIVE_AT_PEAK,
      CLIENTS_PER_ACTIVE_USER,
      PEAK_HOUR_FACTOR,
      SENDS_PER_HOUR,
      PAGES_PER_HOUR,
      TOPIC_LISTS_PER_HOUR,
      SEARCHES_PER_HOUR,
      REGISTERS_PER_HOUR,
      FLAGS_PER_HOUR,
      TYPING_PER_SEND,
      RECEIVERS_PER_MESSAGE,
      PRESENCE_INTERVAL_S,
      HEARTBEAT_S,
      STREAM_ENTRIES_PER_SEND,
      NODE_TARGET_UTILISATION,
      WRITER_CORES,
      WRITER_TARGET_UTILISATION,
      REGISTER_SERVER_SHARE,
      REDIS_APPEND_SHARE_OF_CHEAPEST_REQUEST,
      SMALL_REQUEST_STAND_IN,
      POLL_STAND_IN,
    }).map(([k, v]) => `| \`${k}\` | ${v} |`),
    '',
    '## Cost of one operation',
    '',
    '| operation | Parley µs | database µs | × Express | from |',
    '|---|---:|---:|---:|---|',
    ...ops.map(
      (o) =>
        `| ${o.name} | ${fmt(o.cost.serverUs)} | ${fmt(o.cost.dbUs)} | ${r(o.cost.serverUs / bench.express.serverUs)} | ${o.cost.from} |`,
    ),
    `| a stream entry read, on every node | ${fmt(streamReadUs)} | 0 | ${r(streamReadUs / bench.express.serverUs)} | assumed: as ${bench.poll.name} |`,
    '',
    '"× Express": Parley µs ÷ the same run\'s Express hello-world µs, to carry a figure to other hardware.',
    '',
    '## Peak requests per second',
    '',
    `| operation | ${SIZES.map((s) => `${fmt(s)} users`).join(' | ')} | Parley cores at ${fmt(SIZES.at(-1)!)} | database cores at ${fmt(SIZES.at(-1)!)} |`,
    `|---|${SIZES.map(() => '---:').join('|')}|---:|---:|`,
    ...ops.map((o, i) => {
      const last = sized.at(-1)!.perOp[i]!;
      return `| ${o.name} | ${sized.map((s) => r(s.perOp[i]!.rate)).join(' | ')} | ${fmt(last.cores, 2)} | ${fmt(last.dbCores, 2)} |`;
    }),
    '',
    '## Capacity',
    '',
    head('at the peak hour'),
    line('users active / clients open', (s) => `${fmt(s.t.active)} / ${fmt(s.t.clients)}`),
    line('Parley CPU, cores (Σ rate × Parley µs)', (s) => fmt(s.cores, 2)),
    line(`stream reading, share of each node's core (${fmt(streamReadUs)} µs an entry)`, (s) => pct(s.streamTax, 1)),
    line(`Parley nodes for CPU, at ${100 * NODE_TARGET_UTILISATION} % of a core`, (s) => fmt(s.nodesForCpu)),
    line(`Parley nodes for long-polls, ${fmt(pollsPerNode)} a node (measured)`, (s) => fmt(s.nodesForPolls)),
    line('**Parley nodes** (the larger; add one to lose one)', (s) => `**${fmt(s.nodes)}** (+1)`),
    line('long-poll memory a node, MB', (s) => fmt(((s.t.clients / s.nodes) * longpoll.kbPerClient) / 1024)),
    line('events delivered/s, all nodes', (s) => r(s.t.deliveries)),
    line(`… a node, against ${fmt(1e6 / longpoll.usPerDelivery)}/s measured in one burst`, (s) => r(s.t.deliveries / s.nodes)),
    line('database CPU on the writer, cores (Σ rate × database µs)', (s) => fmt(s.dbCores, 2)),
    line(`… against ${fmt(writerUsableCores, 1)} usable of a ${WRITER_CORES}-core writer (assumed)`, (s) =>
      pct(s.dbCores, writerUsableCores),
    ),
    line(
      `sends/s on the writer, against ${fmt(cluster.twoNodes)} measured through Galera`,
      (s) => `${r(s.t.sends)} (${pct(s.t.sends, cluster.twoNodes)})`,
    ),
    line('write transactions/s (sends, flags, presence)', (s) => r(s.t.sends + s.t.flags + s.t.presenceWrites)),
    line("… of them on the organization's presence sequence row", (s) => r(s.t.presenceWrites)),
    line(
      `Redis stream entries/s, against ≥ ${fmt(cluster.twoNodes)} measured, ${fmt(redisAppendsPerS)} assumed`,
      (s) => `${r(s.t.streamEntries)} (${pct(s.t.streamEntries, redisAppendsPerS)})`,
    ),
    line('**one writer suffices**', (s) =>
      s.dbCores > writerUsableCores
        ? `**no**: ${fmt(s.dbCores, 1)} cores`
        : s.t.sends > cluster.twoNodes
          ? `**not shown**: sends above ${fmt(cluster.twoNodes)}/s`
          : '**yes**',
    ),
  );

  // Where the writer stops: every per-user figure of the model is linear in users (above RECEIVERS_PER_MESSAGE),
  // so the users at a ceiling are the ceiling ÷ the figure per user at the largest size.
  const big = sized.at(-1)!;
  const bySends = (cluster.twoNodes * big.t.users) / big.t.sends;
  const byDb = writerCpuCeiling(big);
  const perGroup = users2(Math.min(bySends, byDb));
  const group = size(perGroup);
  const groups = Math.ceil(SHARDED_USERS / perGroup);
  const registerOp = big.perOp.find((o) => o.op.name === 'POST /register')!;
  const growth = big.t.users / bench.datasetUsers;
  say(
    '',
    '## Where the one writer stops',
    '',
    "| ceiling | figure | users at the model's traffic |",
    '|---|---|---:|',
    `| sends through one Galera writer (measured, 2 shared cores: a floor) | ${fmt(cluster.twoNodes)} msg/s | ${fmt(users2(bySends))} |`,
    `| the writer's database CPU (${fmt(writerUsableCores, 1)} usable cores, assumed) | ${fmt((big.dbCores * 1000) / big.t.users, 3)} cores per 1,000 users | ${fmt(users2(byDb))} |`,
    `| sends alone on one database core (single MariaDB, not Galera) | ${fmt(1e6 / bench.send.dbUs)} msg/s (${fmt(bench.send.dbUs)} µs a send) | ${fmt(users2(((1e6 / bench.send.dbUs) * big.t.users) / big.t.sends))} |`,
    '',
    '## Sharding by organization, costed',
    '',
    `A shard group of ${fmt(perGroup)} users (the lower ceiling above): ${fmt(group.nodes)} Parley nodes (+1), ${fmt(group.dbCores, 1)} database cores on its writer, 3 Galera nodes. ` +
      `${fmt(SHARDED_USERS)} users in organizations of at most that size: ${fmt(groups)} groups, ${fmt(3 * groups)} Galera nodes, ${fmt(groups * group.nodes)} Parley nodes (+1 per group), one Redis stream per group.`,
    '',
    '## Sensitivity',
    '',
    `- POST /register if all of its cost grew with the organization's users (its answer lists every user; measured at ${fmt(bench.datasetUsers)}): ` +
      `at ${fmt(big.t.users)} users ${fmt(registerOp.cores * growth, 0)} Parley cores and ${fmt(registerOp.dbCores * growth, 0)} database cores for it alone, against ${fmt(registerOp.cores, 2)} and ${fmt(registerOp.dbCores, 2)} above.`,
    `- The send at saturation (${bench.sendSaturated.name}): ${fmt(bench.sendSaturated.serverUs)} µs Parley, ${fmt(bench.sendSaturated.dbUs)} µs database, against ${fmt(bench.send.serverUs)} and ${fmt(bench.send.dbUs)} paced.`,
  );
  if (bench.partial) {
    // The same sizing from the full run alone: what the partial run changed.
    const alone = readBench(need('1m'), undefined);
    const was = model(alone, registerCost(alone, readWebFile), longpoll, need('longpoll')).size(big.t.users);
    say(
      `- Without ${rel(bench.partial.file)} (\`partial=none\`: the full run's rows${alone.register ? '' : ", POST /register from the web client's latency"}): ` +
        `at ${fmt(big.t.users)} users ${fmt(was.cores, 2)} Parley cores and ${fmt(was.nodes)} nodes, ${fmt(was.dbCores, 2)} database cores on the writer, ` +
        `its CPU ceiling at ${fmt(users2(writerCpuCeiling(was)))} users; against ${fmt(big.cores, 2)}, ${fmt(big.nodes)}, ${fmt(big.dbCores, 2)} and ${fmt(users2(byDb))} above.`,
    );
  }
  process.stdout.write(out.join('\n') + '\n');
}

main();
