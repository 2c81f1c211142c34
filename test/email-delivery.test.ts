import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { emailDeliveryOptions, type EmailDeliveryOptions, startEmailDelivery, UNKNOWN_OUTCOME } from '../src/actions/email-delivery';
import { queueEmail } from '../src/actions/email-queue';
import { inTransaction } from '../src/db/transaction';
import { EmailState } from '../src/domain/outgoing-emails';
import { html, type EmailTemplate } from '../src/emails/template';
import { createMailTransport, type MailTransport } from '../src/mail/transport';
import { Metrics } from '../src/metrics';
import type { MailFailure } from '../src/mail/errors';
import type { OutgoingEmailRow } from '../src/queries/outgoing-emails';
import { eachDatabase } from './support/databases';
import { queuedEmails } from './support/mail';
import { startTestServer, type TestServer } from './support/server';
import { deliverMailTo, startSmtpServer, type TestSmtpServer } from './support/smtp-server';

/**
 * The mail queue's delivery worker (src/actions/email-delivery.ts) against a
 * real SMTP server in this process: mail queued in a transaction goes out
 * after commit, with its headers; refusals are retried or failed as the
 * server's code says; nothing is lost across a restart or sent twice, by one
 * worker or two.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Note {
  name: string;
}
const note: EmailTemplate<Note> = {
  name: 'test_note',
  languages: {
    en: (d) => ({
      subject: `A note for ${d.name}`,
      text: `Hello ${d.name},\n\nthis is a note.`,
      html: html`<p>Hello ${d.name}, this is a <b>note</b>.</p>`,
    }),
  },
};

const NOREPLY = 'noreply@chat.example.com';

eachDatabase('mail delivery', (dialect) => {
  let t: TestServer;
  let smtp: TestSmtpServer;
  let dataDir: string;
  let transport: MailTransport;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-mail-'));
    t = await startTestServer(dialect, undefined, { dataDir, config: { ...smtp.config(), noreplyEmailAddress: NOREPLY } });
    transport = createMailTransport(t.ctx.config);
  }, 180_000);
  afterAll(async () => {
    transport.close();
    await smtp.stop();
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    smtp.accept();
  });

  interface Seen {
    sent: OutgoingEmailRow[];
    retries: Array<{ row: OutgoingEmailRow; failure: MailFailure; at: number; now: number }>;
    failed: Array<{ row: OutgoingEmailRow; reason: string }>;
    errors: unknown[];
  }
  const run = (over: Partial<EmailDeliveryOptions> = {}, ctx: Pick<TestServer['ctx'], 'db' | 'config'> = t.ctx, via = transport) => {
    const seen: Seen = { sent: [], retries: [], failed: [], errors: [] };
    const stop = startEmailDelivery(ctx, via, {
      ...emailDeliveryOptions(t.ctx.config),
      leaseMs: 3000,
      pollMs: 200,
      retryBaseMs: 200,
      retryMaxMs: 2000,
      maxAttempts: 4,
      attemptMs: 5000,
      onError: (err) => seen.errors.push(err),
      onSent: (row) => seen.sent.push(row),
      onRetry: (row, failure, at) => seen.retries.push({ row, failure, at, now: Date.now() }),
      onFailed: (row, reason) => seen.failed.push({ row, reason }),
      ...over,
    });
    stops.push(stop);
    return { seen, stop: () => (stops.splice(stops.indexOf(stop), 1), stop()) };
  };

  const queue = (to: string, name: string, replyTo: string | null = null) =>
    inTransaction(t.ctx.db, (tx) =>
      queueEmail(t.ctx, tx, {
        template: note,
        data: { name },
        to,
        language: 'en',
        realmId: t.realmId,
        fromName: 'Test Organization',
        replyTo,
      }),
    );
  const rowOf = async (id: number) => (await queuedEmails(t.ctx.db)).find((r) => r.id === id) as unknown as OutgoingEmailRow;

  async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(25);
    }
  }

  it('sends a queued mail after commit, at once: both parts, From, To, Reply-To, Subject and the Message-ID fixed at queue time', async () => {
    // A long poll: only the wake at commit can send it within the test's second.
    const { seen } = run({ pollMs: 30_000 });
    await sleep(300);
    const queuedAt = Date.now();
    const id = await queue('othello@example.com', 'Othello', 'reply-here@chat.example.com');
    const mail = await smtp.waitForMail((m) => m.to.includes('othello@example.com'), 5000);
    expect(Date.now() - queuedAt).toBeLessThan(2000);
    const row = await rowOf(id);
    expect(mail.subject).toBe('A note for Othello');
    expect(mail.text.trim()).toBe('Hello Othello,\n\nthis is a note.');
    expect(mail.html).toBe('<p>Hello Othello, this is a <b>note</b>.</p>');
    expect(mail.from).toBe(NOREPLY);
    expect(mail.fromName).toBe('Test Organization');
    expect(mail.envelope).toEqual({ from: NOREPLY, to: ['othello@example.com'] });
    expect(mail.replyTo).toBe('reply-here@chat.example.com');
    expect(mail.messageId).toBe(`<${String((row as unknown as { message_token: string }).message_token)}@chat.example.com>`);
    expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
    await until('the row is marked sent', async () => Number((await rowOf(id)).state) === EmailState.SENT);
    const sent = await rowOf(id);
    expect(Number(sent.attempts)).toBe(1);
    expect(Number(sent.sent_at)).toBeGreaterThanOrEqual(Math.floor(queuedAt / 1000));
    expect(sent.last_error).toBeNull();
    // Done with: its bodies (which may hold a reset link's token) are not kept; the row's log is.
    expect([sent.text_body, sent.html_body, sent.subject]).toEqual(['', '', mail.subject]);
    expect(seen.sent.map((r) => r.id)).toEqual([id]);
    expect(seen.errors).toEqual([]);
  });

  it('without EMAIL_HOST, writes each mail to DATA_DIR/emails/ as a readable .eml file', async () => {
    const files = createMailTransport({ ...t.ctx.config, emailHost: null });
    expect(files.description).toBe(`files in ${path.join(dataDir, 'emails')} (EMAIL_HOST is not set)`);
    const { seen } = run({}, t.ctx, files);
    const id = await queue('desdemona@example.com', 'Desdemona');
    await until('it is written', () => seen.sent.some((r) => r.id === id));
    const written = fs.readdirSync(path.join(dataDir, 'emails')).filter((f) => f.endsWith('.eml'));
    expect(written).toHaveLength(1);
    const raw = fs.readFileSync(path.join(dataDir, 'emails', written[0]!), 'utf8');
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe('A note for Desdemona');
    expect(parsed.text?.trim()).toBe('Hello Desdemona,\n\nthis is a note.');
    expect(parsed.html).toBe('<p>Hello Desdemona, this is a <b>note</b>.</p>');
    expect(parsed.from?.text).toBe(`"Test Organization" <${NOREPLY}>`);
    expect(Number((await rowOf(id)).state)).toBe(EmailState.SENT);
    // Nothing went to the SMTP server.
    expect(smtp.mails.some((m) => m.to.includes('desdemona@example.com'))).toBe(false);
    files.close();
  });

  it('a server answering 451 gets the mail again after a growing backoff, and it is delivered once the server recovers', async () => {
    smtp.refuseWith(451, '4.3.0 Mailbox busy, try again later', { times: 2 });
    const before = smtp.attempts.rcpt;
    const reachedBefore = smtp.reached.length;
    const started = Date.now();
    const { seen } = run();
    const id = await queue('cassio@example.com', 'Cassio');
    const mail = await smtp.waitForMail((m) => m.to.includes('cassio@example.com'), 10_000);
    expect(mail.subject).toBe('A note for Cassio');
    expect(smtp.attempts.rcpt - before).toBe(3);
    expect(seen.retries.map((r) => r.row.id)).toEqual([id, id]);
    expect(seen.retries[0]!.failure).toEqual({
      permanent: false,
      message: expect.stringContaining('451 4.3.0 Mailbox busy, try again later'),
    });
    // 200 ms, then 400 ms (and up to a tenth more), counted from each failure.
    const waits = seen.retries.map((r) => r.at - r.now);
    expect(waits[0]).toBeGreaterThan(150);
    expect(waits[0]).toBeLessThanOrEqual(220);
    expect(waits[1]).toBeGreaterThan(350);
    expect(waits[1]).toBeLessThanOrEqual(440);
    // As the server saw them: each RCPT TO at least that long after the one refused.
    const rcpts = smtp.reached
      .slice(reachedBefore)
      .filter((r) => r.stage === 'rcpt')
      .map((r) => r.at);
    expect(rcpts[1]! - rcpts[0]!).toBeGreaterThanOrEqual(200);
    expect(rcpts[2]! - rcpts[1]!).toBeGreaterThanOrEqual(400);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    await until('the row is sent', async () => Number((await rowOf(id)).state) === EmailState.SENT);
    const row = await rowOf(id);
    expect(Number(row.attempts)).toBe(3);
    expect(row.last_error).toBeNull();
    expect(seen.failed).toEqual([]);
  });

  it('a server answering 451 every time: the mail fails after the last attempt, with the answer', async () => {
    smtp.refuseWith(451, '4.7.1 Greylisted');
    const { seen } = run({ maxAttempts: 3, retryBaseMs: 50 });
    const id = await queue('bianca@example.com', 'Bianca');
    await until('it fails', () => seen.failed.length > 0);
    const row = await rowOf(id);
    expect(Number(row.state)).toBe(EmailState.FAILED);
    expect(Number(row.attempts)).toBe(3);
    expect(row.last_error).toContain('451 4.7.1 Greylisted');
    expect(row.last_error).toContain('(gave up after 3 attempts)');
    expect(seen.failed[0]!.reason).toBe(row.last_error);
  });

  it('a server answering 550 fails the mail at once, with its answer, and it is not tried again', async () => {
    smtp.refuseWith(550, '5.1.1 No such user here');
    const before = smtp.attempts.rcpt;
    const { seen } = run();
    const id = await queue('roderigo@example.com', 'Roderigo');
    await until('it fails', () => seen.failed.length > 0);
    expect(seen.failed.map((f) => f.row.id)).toEqual([id]);
    expect(seen.failed[0]!.reason).toContain('550 5.1.1 No such user here');
    expect(seen.retries).toEqual([]);
    const row = await rowOf(id);
    expect(Number(row.state)).toBe(EmailState.FAILED);
    expect(Number(row.attempts)).toBe(1);
    expect(row.last_error).toBe(seen.failed[0]!.reason);
    expect([row.text_body, row.html_body]).toEqual(['', '']);
    smtp.accept();
    await sleep(800);
    expect(smtp.attempts.rcpt - before).toBe(1);
    expect(smtp.mails.some((m) => m.to.includes('roderigo@example.com'))).toBe(false);
  });

  it('a 550 to the message itself (after DATA) fails it too', async () => {
    smtp.refuseWith(554, '5.7.1 Message rejected as spam', { stage: 'data' });
    const { seen } = run();
    const id = await queue('emilia@example.com', 'Emilia');
    await until('it fails', () => seen.failed.length > 0);
    expect(seen.retries).toEqual([]);
    const row = await rowOf(id);
    expect(Number(row.attempts)).toBe(1);
    expect(row.last_error).toContain('554 5.7.1 Message rejected as spam');
  });

  it('mail queued in a transaction that rolls back is never stored nor sent', async () => {
    const { seen } = run();
    await expect(
      inTransaction(t.ctx.db, async (tx) => {
        await queueEmail(t.ctx, tx, {
          template: note,
          data: { name: 'Ghost' },
          to: 'ghost@example.com',
          language: 'en',
          realmId: t.realmId,
          fromName: 'X',
        });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // A mail queued after it goes out: the worker was running all along.
    await queue('lodovico@example.com', 'Lodovico');
    await smtp.waitForMail((m) => m.to.includes('lodovico@example.com'));
    await sleep(300);
    expect(await queuedEmails(t.ctx.db, 'ghost@example.com')).toEqual([]);
    expect(smtp.mails.some((m) => m.to.includes('ghost@example.com'))).toBe(false);
    expect(seen.errors).toEqual([]);
  });

  it('a stopped worker leaves queued mail pending; restarted, it sends that, and nothing already sent again', async () => {
    const first = run();
    await queue('brabantio@example.com', 'Brabantio');
    await smtp.waitForMail((m) => m.to.includes('brabantio@example.com'));
    await until('it is marked sent', () => first.seen.sent.length === 1);
    await first.stop();
    const id = await queue('gratiano@example.com', 'Gratiano');
    await sleep(500);
    expect(smtp.mails.some((m) => m.to.includes('gratiano@example.com'))).toBe(false);
    expect(Number((await rowOf(id)).state)).toBe(EmailState.PENDING);
    const second = run();
    await smtp.waitForMail((m) => m.to.includes('gratiano@example.com'));
    await until('it is marked sent', () => second.seen.sent.length === 1);
    await sleep(500);
    expect(second.seen.sent.map((r) => r.id)).toEqual([id]);
    expect(smtp.mails.filter((m) => m.to.includes('brabantio@example.com'))).toHaveLength(1);
    expect(smtp.mails.filter((m) => m.to.includes('gratiano@example.com'))).toHaveLength(1);
  });

  it('a claim left by a process that stopped mid-attempt is failed as unknown, never sent again; a fresh claim is left alone', async () => {
    const stale = await queue('montano@example.com', 'Montano');
    const fresh = await queue('clown@example.com', 'Clown');
    await t.ctx
      .db('outgoing_emails')
      .where({ id: stale })
      .update({ state: EmailState.SENDING, attempts: 1, claimed_at: Date.now() - 60_000, claimed_by: 'gone' });
    await t.ctx
      .db('outgoing_emails')
      .where({ id: fresh })
      .update({ state: EmailState.SENDING, attempts: 1, claimed_at: Date.now(), claimed_by: 'busy' });
    const { seen } = run({ attemptMs: 10_000, leaseMs: 3000 });
    await until('the stale claim is failed', () => seen.failed.length > 0);
    expect(seen.failed).toEqual([{ row: expect.objectContaining({ id: stale }), reason: UNKNOWN_OUTCOME }]);
    const row = await rowOf(stale);
    expect(Number(row.state)).toBe(EmailState.FAILED);
    expect(row.last_error).toBe(UNKNOWN_OUTCOME);
    await sleep(600);
    expect(Number((await rowOf(fresh)).state)).toBe(EmailState.SENDING);
    expect(smtp.mails.some((m) => m.to.includes('montano@example.com') || m.to.includes('clown@example.com'))).toBe(false);
    // Tidy: the fresh claim would be failed the same way 13 s from now.
    await t.ctx.db('outgoing_emails').where({ id: fresh }).update({ state: EmailState.FAILED });
  });

  it('two workers over one database (two processes of a cluster) send each mail once; when one stops the other takes over', async () => {
    const a = run({}, { db: t.ctx.db, config: t.ctx.config });
    const b = run({}, { db: t.ctx.db, config: { ...t.ctx.config } });
    const first: number[] = [];
    for (let i = 0; i < 10; i++) first.push(await queue(`pair-${i}@example.com`, `Pair ${i}`));
    await until('all are sent', () => a.seen.sent.length + b.seen.sent.length === 10);
    // One held the lease and sent them all.
    expect([a.seen.sent.length, b.seen.sent.length].sort()).toEqual([0, 10]);
    const [holder, other] = a.seen.sent.length === 10 ? [a, b] : [b, a];
    await holder.stop();
    const second: number[] = [];
    for (let i = 10; i < 20; i++) second.push(await queue(`pair-${i}@example.com`, `Pair ${i}`));
    await until('the other sends the rest', () => other.seen.sent.length === 10, 15_000);
    await sleep(500);
    const received = smtp.mails.filter((m) => m.to[0]!.startsWith('pair-'));
    expect(received).toHaveLength(20);
    expect(new Set(received.map((m) => m.messageId)).size).toBe(20);
    expect(new Set(received.map((m) => m.to[0])).size).toBe(20);
    expect([...holder.seen.sent, ...other.seen.sent].map((r) => r.id).sort((x, y) => x - y)).toEqual([...first, ...second]);
  });

  it('a connection refused is retried, and the mail goes out once the server is reachable', async () => {
    const closed = createMailTransport({ ...t.ctx.config, emailPort: 1 });
    const { seen, stop } = run({ retryBaseMs: 100 }, t.ctx, closed);
    const id = await queue('lucentio@example.com', 'Lucentio');
    await until('an attempt failed', () => seen.retries.length > 0);
    expect(seen.retries[0]!.failure.permanent).toBe(false);
    expect(seen.retries[0]!.failure.message).toContain('ECONNREFUSED');
    await stop();
    closed.close();
    expect((await rowOf(id)).last_error).toContain('ECONNREFUSED');
    run();
    await smtp.waitForMail((m) => m.to.includes('lucentio@example.com'));
  });

  it('the metrics count the queue by state, as the database holds it', async () => {
    const metrics = new Metrics(t.ctx);
    const text = await metrics.registry.metrics();
    const counts = new Map<number, number>();
    for (const r of (await t.ctx.db('outgoing_emails').select('state')) as Array<{ state: number }>) {
      counts.set(Number(r.state), (counts.get(Number(r.state)) ?? 0) + 1);
    }
    expect(counts.get(EmailState.SENT)).toBeGreaterThan(10);
    for (const [state, name] of [
      [EmailState.PENDING, 'pending'],
      [EmailState.SENDING, 'sending'],
      [EmailState.SENT, 'sent'],
      [EmailState.FAILED, 'failed'],
    ] as const) {
      expect(text).toContain(`parley_outgoing_emails{state="${name}"} ${counts.get(state) ?? 0}\n`);
    }
  });

  it("deliverMailTo (the other suites' helper) runs the worker against the test server, woken by a queue through the context", async () => {
    const stop = deliverMailTo(t.ctx, smtp, { pollMs: 30_000 });
    try {
      await sleep(300);
      const queuedAt = Date.now();
      await queue('portia@example.com', 'Portia');
      const mail = await smtp.waitForMail((m) => m.to.includes('portia@example.com'), 5000);
      expect(Date.now() - queuedAt).toBeLessThan(2000);
      expect(mail.from).toBe(NOREPLY);
    } finally {
      await stop();
    }
  });
});
