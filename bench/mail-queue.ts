/**
 * The mail queue (src/actions/email-queue.ts, src/actions/email-delivery.ts,
 * ADR 0048) under a burst: BENCH_MAILS (default 10,000) missed-message mails
 * queued through queueEmail in the transactions the missed-message worker
 * uses (one per user's batch, one mail per conversation: 1, 2 or 3 mails,
 * 2 on average), then the real delivery worker started (startEmailDelivery,
 * the production settings of emailDeliveryOptions, the SMTP transport of
 * src/mail/transport.ts) against a real SMTP server on 127.0.0.1 in a child
 * process (bench/lib/smtp-sink.ts). Then BENCH_TRICKLE (default 200) more,
 * one per transaction every 25 ms, to the idle worker: the latency of a
 * mail when nothing is queued before it.
 *
 * Prints the queueing cost per mail (wall and CPU), the drain (mails/s, how
 * long the burst took), each mail's latency from its transaction's commit to
 * the SMTP server's acceptance (p50/p90/p99/max), the worker's CPU and SQL
 * statements per mail, and its time in the SMTP conversation. Fails (exit 1)
 * unless every mail arrived exactly once, to its address, and every row is
 * sent. One in-process Parley on a scratch organization: SQLite in a scratch
 * directory, or a scratch database on BENCH_MYSQL_URL's server.
 *
 *   npx tsc -p bench/tsconfig.json && node dist/bench/mail-queue.js
 *   BENCH_MYSQL_URL=mysql://parley:parley@127.0.0.1:3307 node dist/bench/mail-queue.js
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emailDeliveryOptions, startEmailDelivery } from '../src/actions/email-delivery';
import { queueEmail } from '../src/actions/email-queue';
import { loadConfig } from '../src/config';
import { inTransaction } from '../src/db/transaction';
import { EMAIL_STATE_NAMES, EmailState, messageIdOf, type EmailStateValue } from '../src/domain/outgoing-emails';
import { missedMessagesEmail, type MissedMessagesData } from '../src/emails/missed-messages';
import { createMailTransport, type MailTransport } from '../src/mail/transport';
import { startContext } from '../src/server';
import { createScratchDatabase } from './lib/scratch-database';
import { loadScratchOrganization } from './lib/scratch-organization';
import { startSmtpSink } from './lib/smtp-sink';
import { runMain } from './lib/run-main';
import { cpuSecondsOf } from './lib/proc';

const COUNT = Number(process.env.BENCH_MAILS ?? 10_000);
const TRICKLE = Number(process.env.BENCH_TRICKLE ?? 200);
const TRICKLE_GAP_MS = 25;
/** The whole delivery (burst and trickle) must end within this, or the run fails. */
const DEADLINE_MS = Number(process.env.BENCH_MAIL_TIMEOUT_S ?? 900) * 1000;
const USERS = 50;
const CHANNELS = ['general', 'design', 'ops'] as const;

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sortedOf = (xs: number[]) => [...xs].sort((a, b) => a - b);
const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(2));
const summary = (xs: number[]) => {
  const s = sortedOf(xs);
  return `p50 ${fmt(pct(s, 50))}, p90 ${fmt(pct(s, 90))}, p99 ${fmt(pct(s, 99))}, max ${fmt(s[s.length - 1]!)} ms`;
};
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

/** CPU time (ms) a process has used (null elsewhere than Linux, or when it is not on this machine). */
function cpuOfPid(pid: number | null): number | null {
  const s = cpuSecondsOf(pid);
  return s === null ? null : s * 1000;
}
/** A statement without its values: what it does, to which table. */
const statementKind = (sql: string) =>
  sql
    .replace(/\s+/g, ' ')
    .replace(/`/g, '')
    .replace(/\b\d+\b/g, 'N')
    .replace(/(, \?)+/g, ', ?')
    .slice(0, 110);
const perMail = (ms: number | null, n: number) => (ms === null ? 'unknown' : `${((ms * 1000) / n).toFixed(0)} µs a mail`);

/** A user's missed messages in one conversation, as src/actions/missed-message-emails.ts builds them: 1–4 messages. */
function missedMessages(i: number, site: string, names: string[]): MissedMessagesData {
  const n = 1 + (i % 4);
  const channel = i % 3 !== 2;
  const sender = names[(i * 7) % names.length]!;
  const messages = Array.from({ length: n }, (_, k) => ({
    sender: names[(i * 7 + k) % names.length]!,
    html: `<p>Message ${k + 1} of ${n} about item ${i}: the build on <a href="${site}/#narrow/channel/1-general">#general</a> is <strong>green</strong> again, and the review of the change is waiting for you.</p>`,
    text: `Message ${k + 1} of ${n} about item ${i}: the build on #general is **green** again, and the review of the change is waiting for you.`,
  }));
  return {
    realmName: 'Mail queue',
    realmNameInSubject: i % 5 === 0,
    conversation: channel
      ? { kind: 'channel', channel: CHANNELS[i % CHANNELS.length]!, topic: `topic ${i % 17}` }
      : { kind: 'direct', sender },
    mentioned: channel && i % 2 === 0,
    mentionedGroup: null,
    senders: [...new Set(messages.map((m) => m.sender))],
    messages,
    messageCount: n,
    conversationUrl: `${site}/#narrow/channel/1-general/topic/topic.20${i % 17}`,
    unsubscribeUrl: `${site}/accounts/unsubscribe/missed_messages/${i.toString(36).padStart(24, 'x')}`,
    settingsUrl: `${site}/#settings/notifications`,
  };
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-mail-'));
  const mysql = process.env.BENCH_MYSQL_URL ? await createScratchDatabase(process.env.BENCH_MYSQL_URL, 'parley_bench_mail') : null;
  const sink = await startSmtpSink();
  let ctx: Awaited<ReturnType<typeof startContext>> | null = null;
  let transport: MailTransport | null = null;
  let stopWorker: (() => Promise<void>) | null = null;
  try {
    const org = await loadScratchOrganization(dataDir, mysql?.url ?? null, {
      name: 'Mail queue',
      users: USERS,
      prefix: 'mail',
      fullName: 'Mail',
      channels: CHANNELS,
    });
    const config = {
      ...loadConfig({}),
      dataDir,
      databaseUrl: mysql?.url ?? null,
      nodeId: 'bench',
      emailHost: '127.0.0.1',
      emailPort: sink.port,
      emailUseTls: false,
      emailUseSsl: false,
      emailHostUser: null,
      emailHostPassword: null,
    };
    ctx = await startContext(config);
    const db = ctx.db;
    const realmId = Number((await db('users').where({ id: org.users[0]!.id }).first('realm_id'))!.realm_id);
    const site = config.externalUrl.replace(/\/$/, '');
    const names = org.users.map((_, i) => `Mail ${i}`);
    let engine = 'SQLite';
    let dbPid: number | null = null;
    if (mysql) {
      const [[r]] = (await db.raw(
        'select version() as v, @@pid_file as pidFile, @@innodb_flush_log_at_trx_commit as flush, @@innodb_buffer_pool_size as bp',
      )) as [[{ v: string; pidFile: string; flush: number; bp: number | string }]];
      engine = `MariaDB ${r.v} (innodb_flush_log_at_trx_commit ${r.flush}, buffer pool ${Math.round(Number(r.bp) / 2 ** 20)} MiB)`;
      try {
        dbPid = Number(fs.readFileSync(r.pidFile, 'utf8').trim()) || null;
      } catch {
        /* not on this machine's filesystem */
      }
    }

    /** When each mail's transaction committed (ms), by row id. */
    const queuedAt = new Map<number, number>();
    let mailNo = 0;
    const queueTx = async (size: number): Promise<number> => {
      const ids: number[] = [];
      await inTransaction(db, async (tx) => {
        for (let k = 0; k < size; k++, mailNo++) {
          const user = org.users[mailNo % USERS]!;
          ids.push(
            await queueEmail(ctx!, tx, {
              template: missedMessagesEmail,
              data: missedMessages(mailNo, site, names),
              to: user.email,
              language: 'en',
              realmId,
              fromName: 'Mail queue',
              replyTo: `mm${mailNo.toString(16).padStart(32, '0')}@example.com`,
            }),
          );
        }
      });
      const at = Date.now();
      for (const id of ids) queuedAt.set(id, at);
      return ids.length;
    };

    // 1. The burst, queued with no worker running.
    const txMs: number[] = [];
    const txSizes: number[] = [];
    const cpuQueue = process.cpuUsage();
    const dbCpuQueue = cpuOfPid(dbPid);
    const q0 = performance.now();
    for (let queued = 0, t = 0; queued < COUNT; t++) {
      const t1 = performance.now();
      const n = await queueTx(Math.min(1 + (t % 3), COUNT - queued));
      txMs.push(performance.now() - t1);
      txSizes.push(n);
      queued += n;
    }
    const queueWallMs = performance.now() - q0;
    const queueCpuMs = cpuMs(process.cpuUsage(cpuQueue));
    const queueDbCpuMs = dbPid === null ? null : cpuOfPid(dbPid)! - dbCpuQueue!;
    const perMailTx = txMs.map((ms, i) => ms / txSizes[i]!);
    console.log(`${engine}: queued ${COUNT} missed-message mails in ${txMs.length} transactions in ${queueWallMs.toFixed(0)} ms`);
    console.log(
      `  per mail: ${((queueWallMs * 1000) / COUNT).toFixed(0)} µs wall, ${((queueCpuMs * 1000) / COUNT).toFixed(0)} µs CPU of this process${dbPid === null ? '' : `, MariaDB ${perMail(queueDbCpuMs, COUNT)}`}; per transaction (${(COUNT / txMs.length).toFixed(2)} mails): ${summary(txMs)}; per mail of its transaction: ${summary(perMailTx)}`,
    );
    const [sizes] = (await db('outgoing_emails').select(db.raw('AVG(LENGTH(text_body) + LENGTH(html_body)) AS b'))) as unknown as Array<{
      b: number | string;
    }>;
    console.log(`  bodies (text + HTML) ${Number(sizes!.b).toFixed(0)} characters a mail on average`);

    // 2. The worker, as src/main.ts starts it, against the SMTP server.
    const real = createMailTransport(config);
    const smtpMs: number[] = [];
    transport = {
      description: real.description,
      kind: real.kind,
      send: async (mail, deadlineMs) => {
        const t1 = performance.now();
        try {
          return await real.send(mail, deadlineMs);
        } finally {
          smtpMs.push(performance.now() - t1);
        }
      },
      close: () => real.close(),
    };
    // Each kind of statement the worker runs during the burst: how many, and the time from sending it to its answer.
    let statements = 0;
    let timing = true;
    const started = new Map<string, number>();
    const byKind = new Map<string, { n: number; ms: number }>();
    db.on('query', (q: { __knexQueryUid: string }) => {
      if (!timing) return;
      statements++;
      started.set(q.__knexQueryUid, performance.now());
    });
    db.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => {
      const t = started.get(q.__knexQueryUid);
      if (t === undefined) return;
      started.delete(q.__knexQueryUid);
      const kind = statementKind(q.sql);
      const k = byKind.get(kind) ?? { n: 0, ms: 0 };
      k.n++;
      k.ms += performance.now() - t;
      byKind.set(kind, k);
    });
    let sent = 0;
    let failed = 0;
    let retried = 0;
    let burstDone: () => void = () => undefined;
    const burst = new Promise<void>((resolve) => (burstDone = resolve));
    let allDone: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (allDone = resolve));
    const settled = () => {
      if (sent + failed === COUNT) burstDone();
      if (sent + failed === COUNT + TRICKLE) allDone();
    };
    const deadline = new Promise<never>((_, reject) => {
      const timer = setTimeout(() => reject(new Error(`delivery did not end within ${DEADLINE_MS / 1000} s: ${sent} sent`)), DEADLINE_MS);
      timer.unref();
    });
    let lastSentAt = 0;
    const cpuWorker = process.cpuUsage();
    const dbCpuWorker = cpuOfPid(dbPid);
    const sinkCpuWorker = cpuOfPid(sink.pid);
    const d0 = Date.now();
    stopWorker = startEmailDelivery(ctx, transport, {
      ...emailDeliveryOptions(config),
      onError: (err) => console.error('delivery error:', err),
      onSent: () => {
        sent++;
        lastSentAt = Date.now();
        settled();
      },
      onRetry: (row, failure) => {
        retried++;
        console.error(`mail ${row.id} to be retried: ${failure.message}`);
      },
      onFailed: (row, reason) => {
        failed++;
        console.error(`mail ${row.id} failed: ${reason}`);
        settled();
      },
    });
    await Promise.race([burst, deadline]);
    const burstCpuMs = cpuMs(process.cpuUsage(cpuWorker));
    const burstDbCpuMs = dbPid === null ? null : cpuOfPid(dbPid)! - dbCpuWorker!;
    const burstSinkCpuMs = cpuOfPid(sink.pid)! - sinkCpuWorker!;
    const burstStatements = statements;
    timing = false;
    const burstSmtpMs = smtpMs.slice(0, COUNT);
    const burstDrainMs = lastSentAt - d0;

    // 3. The trickle: one mail per transaction to the worker that has nothing else to do.
    const firstTrickleId = Math.max(...queuedAt.keys()) + 1;
    for (let i = 0; i < TRICKLE; i++) {
      await queueTx(1);
      await new Promise((resolve) => setTimeout(resolve, TRICKLE_GAP_MS));
    }
    await Promise.race([all, deadline]);
    await stopWorker();
    stopWorker = null;

    // 4. What arrived, against what was queued.
    const accepted = await sink.accepted();
    const rows = (await db('outgoing_emails').select('id', 'message_token', 'to_address', 'state', 'attempts', 'sent_at')) as Array<{
      id: number | string;
      message_token: string;
      to_address: string;
      state: number | string;
      attempts: number | string;
      sent_at: number | string | null;
    }>;
    const byMessageId = new Map<string, { id: number; to: string }>();
    const states = new Map<string, number>();
    const problems: string[] = [];
    for (const r of rows) {
      byMessageId.set(messageIdOf(r.message_token, config.noreplyEmailAddress), { id: Number(r.id), to: r.to_address });
      const state = EMAIL_STATE_NAMES[Number(r.state) as EmailStateValue] ?? `state ${String(r.state)}`;
      states.set(state, (states.get(state) ?? 0) + 1);
      if (Number(r.state) !== EmailState.SENT || r.sent_at === null) problems.push(`row ${r.id} is ${state}, not sent`);
      else if (Number(r.attempts) !== 1) problems.push(`row ${r.id} was sent after ${r.attempts} attempts`);
    }
    if (rows.length !== COUNT + TRICKLE) problems.push(`${rows.length} rows queued, ${COUNT + TRICKLE} expected`);
    const arrivedAt = new Map<number, number>();
    for (const m of accepted) {
      const row = byMessageId.get(m.messageId);
      if (!row) problems.push(`a mail arrived that was not queued: ${m.messageId || '(no Message-ID)'}`);
      else if (arrivedAt.has(row.id)) problems.push(`row ${row.id} arrived twice`);
      else if (m.to.length !== 1 || m.to[0] !== row.to) problems.push(`row ${row.id} arrived for ${m.to.join(', ')}, not ${row.to}`);
      else arrivedAt.set(row.id, m.at);
    }
    for (const r of rows) if (!arrivedAt.has(Number(r.id))) problems.push(`row ${r.id} never arrived`);
    console.log(
      `verified: ${accepted.length} mails accepted by the SMTP server for ${rows.length} rows; rows by state: ${[...states].map(([s, n]) => `${s} ${n}`).join(', ')}; retried ${retried}, failed ${failed}`,
    );
    if (problems.length > 0) {
      throw new Error(
        `the mail queue lost, repeated or misdirected mail (${problems.length} problems):\n${problems.slice(0, 20).join('\n')}`,
      );
    }

    // 5. The figures.
    const burstLatency: number[] = [];
    const trickleLatency: number[] = [];
    let lastArrival = 0;
    for (const [id, at] of arrivedAt) {
      const latency = at - queuedAt.get(id)!;
      if (id < firstTrickleId) {
        burstLatency.push(latency);
        lastArrival = Math.max(lastArrival, at);
      } else trickleLatency.push(latency);
    }
    const drainMs = lastArrival - d0;
    const gaps = sortedOf([...arrivedAt].filter(([id]) => id < firstTrickleId).map(([, at]) => at)).map((at, i, a) =>
      i === 0 ? at - d0 : at - a[i - 1]!,
    );
    console.log(
      `burst: drained in ${(drainMs / 1000).toFixed(1)} s (last accepted; last recorded sent ${(burstDrainMs / 1000).toFixed(1)} s) after the worker started: ${(COUNT / (drainMs / 1000)).toFixed(0)} mails/s`,
    );
    console.log(`  queued → accepted: ${summary(burstLatency)}`);
    console.log(`  between acceptances: ${summary(gaps)}`);
    console.log(
      `  worker process CPU ${((burstCpuMs * 1000) / COUNT).toFixed(0)} µs a mail (${(burstCpuMs / 1000).toFixed(1)} s of ${(burstDrainMs / 1000).toFixed(1)} s, ${((100 * burstCpuMs) / burstDrainMs).toFixed(0)} % of a core); ${(burstStatements / COUNT).toFixed(1)} SQL statements a mail`,
    );
    console.log(
      `  ${dbPid === null ? '' : `MariaDB CPU ${perMail(burstDbCpuMs, COUNT)}; `}the SMTP server's CPU ${perMail(burstSinkCpuMs, COUNT)}`,
    );
    for (const [kind, k] of [...byKind].sort((a, b) => b[1].ms - a[1].ms)) {
      const often = k.n >= COUNT / 100 ? `${(k.n / COUNT).toFixed(2)} a mail` : `${k.n} in all`;
      console.log(`    ${often}, ${((k.ms * 1000) / k.n).toFixed(0)} µs each (sent → answered): ${kind}`);
    }
    const smtpTotal = burstSmtpMs.reduce((a, b) => a + b, 0);
    console.log(
      `  in transport.send (the SMTP conversation, MIME built): ${summary(burstSmtpMs)}; ${((100 * smtpTotal) / burstDrainMs).toFixed(0)} % of the drain, the rest the claim and the record`,
    );
    if (TRICKLE > 0)
      console.log(
        `trickle: ${TRICKLE} mails one per transaction every ${TRICKLE_GAP_MS} ms, queued → accepted: ${summary(trickleLatency)}`,
      );
  } finally {
    if (stopWorker) await stopWorker().catch(() => undefined);
    transport?.close();
    await ctx?.db.destroy();
    await sink.stop();
    await mysql?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
