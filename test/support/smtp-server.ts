import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { emailDeliveryOptions, type EmailDeliveryOptions, startEmailDelivery } from '../../src/actions/email-delivery';
import type { Config } from '../../src/config';
import type { AppContext } from '../../src/context';
import { createMailTransport } from '../../src/mail/transport';

/**
 * A real SMTP server in the test process, on 127.0.0.1 and a free port, that
 * keeps every mail it accepts, parsed. Point Parley at it with `config()`
 * (a context's settings) or `env()` (a process's). It can be told to refuse:
 * `refuseWith(451, 'Try later')` answers the next RCPT TO (or another stage)
 * with that code, every time or the given number of times; and to require a
 * user name and password.
 *
 *   const smtp = await startSmtpServer();
 *   ... queue a mail, run the delivery worker with smtp.config() ...
 *   const mail = await smtp.waitForMail((m) => m.to.includes('iago@zulip.com'));
 *   expect(mail.subject).toBe('...');
 *   await smtp.stop();
 */
export interface ReceivedMail {
  /** The envelope: MAIL FROM and RCPT TO, as the server was told. */
  envelope: { from: string; to: string[] };
  /** The From header's address and display name. */
  from: string;
  fromName: string;
  /** The To header's addresses. */
  to: string[];
  replyTo: string | null;
  subject: string;
  messageId: string;
  text: string;
  html: string;
  /** Every header, names lowercased; a repeated header's last value. */
  headers: Map<string, string>;
  /** The message as received. */
  raw: string;
}

export type SmtpStage = 'mail' | 'rcpt' | 'data';

export interface TestSmtpServer {
  port: number;
  /** The mails accepted so far, oldest first. */
  mails: ReceivedMail[];
  /** How many times each stage was reached (a refused RCPT TO counts): a retry shows here. */
  attempts: Record<SmtpStage, number>;
  /** When each stage was reached (Date.now()), in order: the spacing of retries. */
  reached: Array<{ stage: SmtpStage; at: number }>;
  /** The first mail (already received, or to come) matching `predicate`; rejects after `timeoutMs`. */
  waitForMail(predicate?: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Answer `stage` (RCPT TO unless said) with `code message`, `times` times (every time unless said). */
  refuseWith(code: number, message: string, opts?: { stage?: SmtpStage; times?: number }): void;
  /** Answer nothing at `stage` (the message received whole, for 'data'): the client waits, as for a hung server. */
  stall(stage: SmtpStage): void;
  /** Accept again (and stop stalling). */
  accept(): void;
  /** EMAIL_* settings for a context (loadConfig's names), for a transport pointed here. */
  config(): Partial<Config>;
  /** The same as environment variables, for a spawned server or CLI. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

export async function startSmtpServer(opts: { auth?: { user: string; pass: string } } = {}): Promise<TestSmtpServer> {
  const mails: ReceivedMail[] = [];
  const attempts: Record<SmtpStage, number> = { mail: 0, rcpt: 0, data: 0 };
  const reached: Array<{ stage: SmtpStage; at: number }> = [];
  const waiters: Array<{ predicate: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }> = [];
  let refusal: { code: number; message: string; stage: SmtpStage; times: number } | null = null;
  let stalled: SmtpStage | null = null;

  /** The refusal for this stage, if one is due (and counted). */
  const refused = (stage: SmtpStage): Error | null => {
    attempts[stage]++;
    reached.push({ stage, at: Date.now() });
    if (!refusal || refusal.stage !== stage || refusal.times <= 0) return null;
    refusal.times--;
    return Object.assign(new Error(refusal.message), { responseCode: refusal.code });
  };

  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS offered, and credentials accepted without it.
    disabledCommands: opts.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: !opts.auth,
    logger: false,
    onAuth(auth, _session, callback) {
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onMailFrom(_address: SMTPServerAddress, _session, callback) {
      const err = refused('mail');
      if (stalled !== 'mail') callback(err);
    },
    onRcptTo(_address: SMTPServerAddress, _session, callback) {
      const err = refused('rcpt');
      if (stalled !== 'rcpt') callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const refusedData = refused('data');
        if (stalled === 'data') return;
        if (refusedData) return callback(refusedData);
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            const mail = received(parsed, raw, {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            });
            mails.push(mail);
            for (const w of waiters.splice(0)) {
              if (w.predicate(mail)) w.resolve(mail);
              else waiters.push(w);
            }
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;

  return {
    port,
    mails,
    attempts,
    reached,
    waitForMail(predicate = () => true, timeoutMs = 10_000) {
      const found = mails.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = {
          predicate,
          resolve: (m: ReceivedMail) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no matching mail within ${timeoutMs} ms (${mails.length} received)`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    refuseWith(code, message, o = {}) {
      refusal = { code, message, stage: o.stage ?? 'rcpt', times: o.times ?? Infinity };
    },
    stall(stage) {
      stalled = stage;
    },
    accept() {
      refusal = null;
      stalled = null;
    },
    config: () => ({
      emailHost: '127.0.0.1',
      emailPort: port,
      emailUseTls: false,
      emailUseSsl: false,
      emailHostUser: opts.auth?.user ?? null,
      emailHostPassword: opts.auth?.pass ?? null,
    }),
    env: () => ({
      EMAIL_HOST: '127.0.0.1',
      EMAIL_PORT: String(port),
      ...(opts.auth ? { EMAIL_HOST_USER: opts.auth.user, EMAIL_HOST_PASSWORD: opts.auth.pass } : {}),
    }),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const addressesOf = (a: AddressObject | AddressObject[] | undefined): Array<{ address: string; name: string }> =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value.map((v) => ({ address: v.address ?? '', name: v.name })));

function received(parsed: ParsedMail, raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const from = addressesOf(parsed.from)[0];
  const headers = new Map<string, string>();
  for (const line of parsed.headerLines) headers.set(line.key, line.line.slice(line.line.indexOf(':') + 1).trim());
  return {
    envelope,
    from: from?.address ?? '',
    fromName: from?.name ?? '',
    to: addressesOf(parsed.to).map((a) => a.address),
    replyTo: addressesOf(parsed.replyTo)[0]?.address ?? null,
    subject: parsed.subject ?? '',
    messageId: parsed.messageId ?? '',
    text: parsed.text ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : '',
    headers,
    raw,
  };
}

/**
 * Runs the delivery worker of `ctx` (a test server's context) against
 * `smtp`, with retries a test can wait for (100 ms, doubled); returns its
 * stop, which also closes the connection. For an end-to-end test: an action
 * queues mail through `ctx`, `smtp.waitForMail(...)` receives it.
 *
 *   const stopMail = deliverMailTo(t.ctx, smtp);
 *   ... POST /invites ...
 *   const mail = await smtp.waitForMail((m) => m.to.includes('new@example.com'));
 *   await stopMail();
 */
export function deliverMailTo(
  ctx: Pick<AppContext, 'db' | 'config'>,
  smtp: TestSmtpServer,
  over: Partial<EmailDeliveryOptions> = {},
): () => Promise<void> {
  const transport = createMailTransport({ ...ctx.config, ...smtp.config() });
  // The context itself: the worker is woken by mail queued through it.
  const stop = startEmailDelivery(ctx, transport, {
    ...emailDeliveryOptions(ctx.config),
    leaseMs: 3000,
    pollMs: 200,
    retryBaseMs: 100,
    retryMaxMs: 1000,
    maxAttempts: 3,
    attemptMs: 5000,
    onError: (err) => {
      throw err;
    },
    ...over,
  });
  return async () => {
    await stop();
    transport.close();
  };
}
