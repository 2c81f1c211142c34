/**
 * Sends to the channel everyone is in, on the `big` dataset (BENCH_SCALE=big:
 * 10,000 users, 70% of them soft-deactivated months ago, ADR 0058):
 * 1. every active member of `general` registers a queue for message events
 *    and long-polls it, from a child process (this script, `pollers`);
 * 2. BENCH_ANNOUNCE_SENDERS (4) closed-loop senders post to `general` for
 *    BENCH_ANNOUNCE_SECONDS (30): each send's latency, and the delay from
 *    the send until each long-poll returned it (every one must);
 * 3. BENCH_ANNOUNCE_RETURNING (3) idle users come back: their first request
 *    (the catch-up) and the rows it wrote; then GET /messages newest 100 for
 *    them and for active users, the median of 30 each;
 * 4. the returning users are made idle again as the dataset had them, and
 *    the messages the run posted removed, so every run sees the same data.
 * Parley runs as its own process (dist/src/main.js); its CPU and the
 * database's are read from /proc. The report goes to bench/results/.
 *
 *   BENCH_SCALE=big BENCH_DB=mariadb BENCH_ANNOUNCE=1 bash bench/run.sh
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../src/db/connection';
import { UNREAD_TABLE } from '../src/queries/unread';
import { listRowsOfMessage } from '../src/queries/message-receivers';
import {
  BENCH_DIR,
  type Credential,
  readCredentials,
  readManifest,
  removePosted,
  resolveTarget,
  type Manifest,
  type Target,
} from './lib/dataset';
import { now } from './lib/delivery-loop';
import { basic, qs, request } from './lib/http';
import { afterPurge, backgroundWorkText } from './lib/background-work';
import { cpuSecondsOf } from './lib/proc';
import { fmtInt } from './lib/progress';
import { freshResultBase } from './lib/result-file';
import { runMain } from './lib/run-main';
import { stopChild } from './lib/stop-child';
import { type BenchServer, startBenchServer } from './lib/server-process';

const SENDERS = Number(process.env.BENCH_ANNOUNCE_SENDERS ?? 4);
const SECONDS = Number(process.env.BENCH_ANNOUNCE_SECONDS ?? 30);
const RETURNING = Number(process.env.BENCH_ANNOUNCE_RETURNING ?? 3);
const PAGE_REPEATS = 30;
/** BENCH_ANNOUNCE_RATE: sends per second over all senders, paced (each sender waits its turn); unset: closed loop. */
const RATE = process.env.BENCH_ANNOUNCE_RATE ? Number(process.env.BENCH_ANNOUNCE_RATE) : null;
/** BENCH_ANNOUNCE_ALL_ROWS=1: the idle users' subscriptions are not marked idle during the run, so sends write every row (as before ADR 0058). */
const ALL_ROWS = process.env.BENCH_ANNOUNCE_ALL_ROWS === '1';
/** BENCH_ANNOUNCE_POLL=0: nobody long-polls (the send path alone). */
const POLL = process.env.BENCH_ANNOUNCE_POLL !== '0';

const pct = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const sortedOf = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const median = (xs: readonly number[]) => pct(sortedOf(xs), 50);

// ---------------------------------------------------------------- the pollers (child process)

/** Parent → pollers. */
type ToPollers = { register: { port: number; users: Credential[] } } | { report: Array<[number, number]> } | { stop: true };
/** Pollers → parent. */
type FromPollers = { registered: number; ms: number } | { delays: number[]; missing: number; polls: number; errors: number };

async function pollers(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  let port = 0;
  /** Message id → when each queue's poll returned it (this machine's shared clock). */
  const arrivals = new Map<number, number[]>();
  let queues = 0;
  let polls = 0;
  let errors = 0;
  let stopping = false;
  const send = (m: FromPollers) => process.send!(m);

  const poll = async (user: Credential, queueId: string, lastEventId: number): Promise<void> => {
    let last = lastEventId;
    while (!stopping) {
      let r;
      try {
        r = await request(agent, port, 'GET', `/api/v1/events${qs({ queue_id: queueId, last_event_id: last })}`, basic(user));
      } catch {
        errors++;
        continue;
      }
      polls++;
      const at = now();
      if (r.status !== 200) {
        errors++;
        return;
      }
      for (const e of r.body.events as Array<{ id: number; type: string; message?: { id: number } }>) {
        last = Math.max(last, e.id);
        if (e.type === 'message' && e.message) {
          let list = arrivals.get(e.message.id);
          if (!list) arrivals.set(e.message.id, (list = []));
          list.push(at);
        }
      }
    }
  };

  process.on('message', (m: ToPollers) => {
    if ('register' in m) {
      port = m.register.port;
      const started = now();
      void (async () => {
        const users = [...m.register.users];
        const worker = async () => {
          for (let u = users.shift(); u; u = users.shift()) {
            const r = await request(agent, port, 'POST', '/api/v1/register', basic(u), {
              event_types: JSON.stringify(['message']),
              fetch_event_types: JSON.stringify([]),
            });
            if (r.status !== 200) throw new Error(`register ${u.email}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
            queues++;
            void poll(u, r.body.queue_id as string, r.body.last_event_id as number);
          }
        };
        await Promise.all(Array.from({ length: 8 }, worker));
        send({ registered: queues, ms: now() - started });
      })().catch((err: unknown) => {
        process.stderr.write(`pollers: ${String(err)}\n`);
        process.exit(1);
      });
    } else if ('report' in m) {
      const delays: number[] = [];
      let missing = 0;
      for (const [id, sentAt] of m.report) {
        const got = arrivals.get(id) ?? [];
        missing += Math.max(0, queues - got.length);
        for (const at of got) delays.push(at - sentAt);
      }
      send({ delays, missing, polls, errors });
    } else {
      stopping = true;
      agent.destroy();
      process.exit(0);
    }
  });
}

// ---------------------------------------------------------------- the run

interface SendSample {
  id: number;
  sentAt: number;
  ms: number;
}

function ask<T extends FromPollers>(child: ChildProcess, m: ToPollers, is: (r: FromPollers) => r is T): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (r: FromPollers) => {
      if (!is(r)) return;
      child.off('message', on);
      resolve(r);
    };
    child.on('message', on);
    child.once('exit', (code) => reject(new Error(`pollers exited (${code})`)));
    child.send(m);
  });
}

/** The users as the dataset has them: active humans (who poll), idle humans (who may come back). */
async function usersOf(target: Target, m: Manifest): Promise<{ active: number[]; idle: number[] }> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    const rows: Array<{ id: number; long_term_idle: number | boolean }> = await db('users')
      .where({ realm_id: m.realmId, is_active: true, is_bot: false })
      .orderBy('id')
      .select('id', 'long_term_idle');
    return {
      active: rows.filter((r) => !r.long_term_idle).map((r) => Number(r.id)),
      idle: rows.filter((r) => r.long_term_idle).map((r) => Number(r.id)),
    };
  } finally {
    await db.destroy();
  }
}

/** Rows a user holds, and the dataset's state put back for users who came back during the run. */
async function rowCount(target: Target, userId: number): Promise<number> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    return Number((await db('user_messages').where({ user_id: userId }).count({ n: '*' }).first())?.n ?? 0);
  } finally {
    await db.destroy();
  }
}

/**
 * Makes the users idle again as the generator left them: the rows their
 * catch-up wrote (flags 0, above the last active message, generated
 * messages) and their unread side rows go, the idle bits come back.
 */
async function putBackIdle(target: Target, m: Manifest, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0 || !m.idle) return;
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  const L = m.idle.lastActiveMessageId;
  try {
    for (const id of userIds) {
      for (;;) {
        const ids = (
          await db('user_messages as um')
            .join('messages as ms', 'ms.id', 'um.message_id')
            .join('recipients as r', 'r.id', 'ms.recipient_id')
            .where('um.user_id', id)
            .where('um.flags', 0)
            .where('r.type', 2)
            .whereBetween('um.message_id', [L + 1, m.maxMessageId])
            .limit(5000)
            .pluck('um.message_id')
        ).map(Number);
        if (ids.length === 0) break;
        await db.transaction(async (trx) => {
          await trx(UNREAD_TABLE).where('user_id', id).whereIn('message_id', ids).del();
          await trx('user_messages').where('user_id', id).whereIn('message_id', ids).del();
        });
      }
      await db('users').where({ id }).update({ long_term_idle: true, last_active_message_id: L });
      await db('subscriptions')
        .where({ user_id: id })
        .update({ is_user_long_term_idle: true, idle_keeps_rows: false, idle_since_message_id: null });
      await db('soft_reactivations').where({ user_id: id }).del();
      await db('idle_subscription_spans').where({ user_id: id }).del();
    }
  } finally {
    await db.destroy();
  }
}

/** Sets (or clears, for BENCH_ANNOUNCE_ALL_ROWS) the idle bit of the idle users' subscriptions. */
async function markSubscriptionsIdle(target: Target, userIds: readonly number[], idle: boolean): Promise<void> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    for (let i = 0; i < userIds.length; i += 1000) {
      await db('subscriptions')
        .whereIn('user_id', userIds.slice(i, i + 1000))
        .update({ is_user_long_term_idle: idle });
    }
  } finally {
    await db.destroy();
  }
}

async function databasePid(target: Target): Promise<number | null> {
  if (target.db !== 'mariadb') return null;
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    const [rows] = await db.raw('select @@pid_file as f');
    return Number(fs.readFileSync(String(rows[0].f), 'utf8').trim()) || null;
  } catch {
    return null;
  } finally {
    await db.destroy();
  }
}

async function main(): Promise<void> {
  const target = resolveTarget({ ...process.env, BENCH_SCALE: process.env.BENCH_SCALE ?? 'big' });
  if (!readManifest(target)) {
    process.stderr.write(`announce: no ${target.scale.name} dataset at ${target.dir}: generating it\n`);
    execFileSync(process.execPath, [path.join(__dirname, 'generate.js')], {
      env: { ...process.env, BENCH_SCALE: target.scale.name },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  }
  const m = readManifest(target);
  if (!m?.idle) throw new Error(`the ${target.scale.name} dataset has no idle users: bench/announce.ts needs BENCH_SCALE=big`);
  const creds = readCredentials(target);
  const announcement = m.idle.announcement;
  process.stderr.write(`announce: ${m.scale} on ${target.db}; ${fmtInt(m.idle.users)} idle users; removing earlier runs' messages\n`);
  await removePosted(target, m);
  const { active, idle } = await usersOf(target, m);
  const returning = idle.slice(0, RETURNING);
  await putBackIdle(target, m, returning); // an interrupted earlier run may have left them caught up
  await markSubscriptionsIdle(target, idle, !ALL_ROWS);
  const dbPid = await databasePid(target);

  let server: BenchServer | null = null;
  let child: ChildProcess | null = null;
  const started = new Date();
  try {
    // BENCH_CPU_PROF=1: Parley runs with --cpu-prof into bench/.data/prof/ (node dist/bench/profile.js reads it).
    const profDir = path.join(BENCH_DIR, '.data', 'prof');
    server = await startBenchServer({
      dataDir: target.dataDir,
      databaseUrl: target.databaseUrl ?? '',
      nodeArgs: process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    });
    const port = server.port;
    child = fork(__filename, ['pollers'], { stdio: 'inherit' });
    const pollUsers = POLL ? active.map((id) => creds.get(id)!).filter(Boolean) : [];
    const reg = await ask(
      child,
      { register: { port, users: pollUsers } },
      (r): r is { registered: number; ms: number } => 'registered' in r,
    );
    process.stderr.write(`  ${fmtInt(reg.registered)} queues registered and polling (${(reg.ms / 1000).toFixed(1)} s)\n`);

    // The senders: active members, each on its own connection.
    const senders = active.slice(0, SENDERS).map((id) => creds.get(id)!);
    const samples: SendSample[] = [];
    const post = async (c: Credential, agent: http.Agent, n: number) => {
      const sentAt = now();
      const r = await request(agent, port, 'POST', '/api/v1/messages', basic(c), {
        type: 'stream',
        to: String(announcement.id),
        topic: 'announcements',
        content: `Announcement ${n} from ${c.email}: the office is closed on Friday.`,
      });
      if (r.status !== 200) throw new Error(`send: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      return { id: r.body.id as number, sentAt, ms: r.ms };
    };
    const agents = senders.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    for (let i = 0; i < 10; i++) await post(senders[0]!, agents[0]!, -i); // warm-up, not measured
    await new Promise((r) => setTimeout(r, 2000));
    // The previous run's messages were deleted above: millions of rows for purge to clean.
    const background = await afterPurge(target, 180_000);
    const warmReport = await ask(child, { report: [] }, (r): r is Extract<FromPollers, { delays: number[] }> => 'delays' in r);
    const serverCpu0 = cpuSecondsOf(server.child.pid);
    const dbCpu0 = cpuSecondsOf(dbPid);
    const clientCpu0 = process.cpuUsage();
    const until = now() + SECONDS * 1000;
    let n = 0;
    const loadStart = now();
    await Promise.all(
      senders.map(async (c, i) => {
        if (RATE === null) {
          while (now() < until) samples.push(await post(c, agents[i]!, n++));
          return;
        }
        // Paced: sender i sends at loadStart + (i + k × senders) / rate; a late answer delays only its own next turn.
        for (let k = 0; ; k++) {
          const due = loadStart + ((i + k * senders.length) / RATE) * 1000;
          if (due >= until) return;
          if (due > now()) await new Promise((r) => setTimeout(r, due - now()));
          samples.push(await post(c, agents[i]!, n++));
        }
      }),
    );
    const wall = SECONDS;
    const serverCpu = (cpuSecondsOf(server.child.pid) ?? NaN) - (serverCpu0 ?? NaN);
    const dbCpu = (cpuSecondsOf(dbPid) ?? NaN) - (dbCpu0 ?? NaN);
    const clientCpu = process.cpuUsage(clientCpu0);
    await new Promise((r) => setTimeout(r, 3000)); // the last deliveries
    const delivered = await ask(
      child,
      { report: samples.map((s) => [s.id, s.sentAt]) },
      (r): r is Extract<FromPollers, { delays: number[] }> => 'delays' in r,
    );

    // Rows the sends wrote: a sample's holders.
    const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
    let rowsPerSend = 0;
    try {
      rowsPerSend = (await listRowsOfMessage(db, samples[0]!.id)).length;
    } finally {
      await db.destroy();
    }

    {
      const s = sortedOf(samples.map((x) => x.ms));
      const d = sortedOf(delivered.delays);
      process.stderr.write(
        `  ${fmtInt(samples.length)} sends: p50 ${ms(pct(s, 50))} ms, p99 ${ms(pct(s, 99))}; delivery p99 ${ms(pct(d, 99))} ms,` +
          ` max ${ms(d[d.length - 1] ?? NaN)}, ${fmtInt(delivered.missing)} missing; ${fmtInt(rowsPerSend)} rows a send\n`,
      );
    }
    // Returning users: the first request catches up; then their pages against active users'.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const returns: Array<{ id: number; firstMs: number; rowsBefore: number; rowsAfter: number }> = [];
    for (const id of returning) {
      const c = creds.get(id)!;
      const before = await rowCount(target, id);
      const r = await request(agent, port, 'GET', '/api/v1/users/me', basic(c));
      if (r.status !== 200) throw new Error(`returning user: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      returns.push({ id, firstMs: r.ms, rowsBefore: before, rowsAfter: await rowCount(target, id) });
    }
    const page = async (ids: readonly number[]) => {
      const times: number[] = [];
      for (let i = 0; i < PAGE_REPEATS; i++) {
        const c = creds.get(ids[i % ids.length]!)!;
        const r = await request(agent, port, 'GET', `/api/v1/messages${qs({ anchor: 'newest', num_before: 100, num_after: 0 })}`, basic(c));
        if (r.status !== 200) throw new Error(`GET /messages: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
        times.push(r.ms);
      }
      return times;
    };
    await page(returning);
    await page(active.slice(SENDERS, SENDERS + RETURNING));
    const returningPage = await page(returning);
    const activePage = await page(active.slice(SENDERS, SENDERS + RETURNING));

    // ---------------------------------------------------------------- the report
    const sendMs = sortedOf(samples.map((s) => s.ms));
    const delays = sortedOf(delivered.delays);
    const over1s = delays.filter((d) => d > 1000).length;
    const lines = [
      `# Sends to the channel everyone is in (${m.scale}, ${target.db}), ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      '',
      `Dataset: ${fmtInt(m.counts.users!)} users, ${fmtInt(m.idle.users)} of them idle since message ${fmtInt(m.idle.lastActiveMessageId)}` +
        ` of ${fmtInt(m.counts.messages!)}; \`${announcement.name}\` has every user. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}.`,
      '',
      `- **Sends:** ${SENDERS} ${RATE === null ? 'closed-loop senders' : `senders paced at ${RATE}/s in all`} for ${wall} s: ${fmtInt(samples.length)} sends, ${(samples.length / wall).toFixed(1)}/s;` +
        ` latency p50 ${ms(pct(sendMs, 50))} ms, p90 ${ms(pct(sendMs, 90))}, p99 ${ms(pct(sendMs, 99))}, max ${ms(sendMs[sendMs.length - 1]!)}.`,
      `- **Rows a send writes:** ${fmtInt(rowsPerSend)}` +
        (ALL_ROWS
          ? ' (BENCH_ANNOUNCE_ALL_ROWS=1: every subscriber, idle or not, as before soft deactivation).'
          : ` (the ${fmtInt(active.length)} active users; ${fmtInt(m.counts.users! - rowsPerSend)} idle users without one).`),
      `- **Delivery** to ${fmtInt(reg.registered)} long-polling queues: ${fmtInt(delays.length)} events;` +
        ` send → event p50 ${ms(pct(delays, 50))} ms, p99 ${ms(pct(delays, 99))}, max ${ms(delays[delays.length - 1] ?? NaN)};` +
        ` ${fmtInt(over1s)} later than 1 s; ${fmtInt(delivered.missing)} never arrived; ${fmtInt(delivered.errors)} poll errors` +
        ` (warm-up: ${fmtInt(warmReport.polls)} polls before the load).`,
      `- **CPU during the sends:** Parley ${serverCpu.toFixed(1)} s (${((serverCpu * 1000) / samples.length).toFixed(1)} ms a send, events included),` +
        ` the database ${dbCpu.toFixed(1)} s (${((dbCpu * 1000) / samples.length).toFixed(1)} ms a send),` +
        ` the senders ${((clientCpu.user + clientCpu.system) / 1e6).toFixed(1)} s; the pollers are a process of their own.`,
      ...(background ? [`- **The database:** ${backgroundWorkText(background)}`] : []),
      `- **Returning users** (first request catches up):`,
      ...returns.map(
        (r) =>
          `  - user ${r.id}: first request ${ms(r.firstMs)} ms; rows ${fmtInt(r.rowsBefore)} → ${fmtInt(r.rowsAfter)} (+${fmtInt(r.rowsAfter - r.rowsBefore)})`,
      ),
      `- **GET /messages newest 100** after that, median of ${PAGE_REPEATS}: returning users ${ms(median(returningPage))} ms,` +
        ` active users ${ms(median(activePage))} ms (ratio ${(median(returningPage) / median(activePage)).toFixed(2)}).`,
      '',
      `Targets (ADR 0058): send p99 ≤ 100 ms under ${SENDERS} ${RATE === null ? 'closed-loop' : 'paced'} senders${POLL ? '' : ' (nobody polling)'} — ${pct(sendMs, 99) <= 100 ? 'met' : 'missed'};` +
        ` every long-poll within 1 s — ${over1s === 0 && delivered.missing === 0 ? 'met' : 'missed'};` +
        ` GET /messages for a returning user as fast as for an active one — ratio ${(median(returningPage) / median(activePage)).toFixed(2)}.`,
      '',
    ];
    const text = lines.join('\n');
    process.stdout.write(text);
    const variant = `${RATE === null ? 'closed' : `paced-${RATE}`}${POLL ? '' : '-nopoll'}${ALL_ROWS ? '-allrows' : ''}`;
    const base = freshResultBase(path.join(BENCH_DIR, 'results'), started, `${m.scale}-${target.db}-announce-${variant}`);
    fs.writeFileSync(`${base}.md`, text);
    process.stderr.write(`report: ${base}.md\n`);
  } finally {
    if (child) await stopChild(child, (c) => c.send({ stop: true } satisfies ToPollers), 5000);
    if (server) await stopChild(server.child, (c) => c.kill('SIGTERM'), 10_000);
    await markSubscriptionsIdle(target, idle, true);
    await putBackIdle(target, m, returning);
    await removePosted(target, m);
  }
}

if (process.argv[2] === 'pollers') void pollers();
else runMain(main);
