import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type { Config } from '../config';

/** A mail ready to go: what the queue stored, with the server's From address and the Message-ID. */
export interface OutgoingMail {
  from: { name: string; address: string };
  to: string;
  replyTo?: string | null;
  subject: string;
  text: string;
  html: string;
  /** With its angle brackets: <token@domain>. */
  messageId: string;
}

/** What the transport answered for a mail it took. */
export interface MailSent {
  /** The SMTP server's final answer (250 …), or where the file transport wrote the mail. */
  response: string;
  accepted: string[];
  rejected: string[];
  /** The file written (file transport only). */
  file?: string;
}

export interface MailTransport {
  /** Where mail goes, for the start-up lines and send-test-email: "SMTP smtp.example.com:587 (STARTTLS, as user x)". */
  readonly description: string;
  readonly kind: 'smtp' | 'file';
  /** Sends one mail; rejects with nodemailer's error (src/mail/errors.ts reads it). `deadlineMs`: the attempt as a whole. */
  send(mail: OutgoingMail, deadlineMs?: number): Promise<MailSent>;
  /** Ends the pooled connection. */
  close(): void;
}

type MailSettings = Pick<
  Config,
  'dataDir' | 'emailHost' | 'emailPort' | 'emailHostUser' | 'emailHostPassword' | 'emailUseTls' | 'emailUseSsl' | 'emailTimeoutSeconds'
>;

/** SMTP through EMAIL_HOST, or, without it, a file per mail under DATA_DIR/emails/. */
export function createMailTransport(config: MailSettings): MailTransport {
  return config.emailHost === null ? new FileTransport(path.join(config.dataDir, 'emails')) : new SmtpTransport(config, config.emailHost);
}

/**
 * nodemailer, loaded when the first mail is sent rather than at start: a
 * server that sends no mail for hours (most of a small one's life) does not
 * hold its modules.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodemailer = () => require('nodemailer') as typeof import('nodemailer');

/** Headers every mail carries besides its own. */
const HEADERS = {
  // RFC 3834: a machine wrote it, so vacation responders and the like do not answer it.
  'Auto-Submitted': 'auto-generated',
};

function messageOf(mail: OutgoingMail): SendMailOptions {
  return {
    from: { name: mail.from.name, address: mail.from.address },
    to: mail.to,
    replyTo: mail.replyTo ?? undefined,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    headers: HEADERS,
  };
}

const addresses = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((a) => (typeof a === 'string' ? a : String((a as { address?: string }).address ?? a))) : [];

class SmtpTransport implements MailTransport {
  readonly kind = 'smtp';
  readonly description: string;
  private readonly timeoutMs: number;
  private mailerMade: Transporter | null = null;
  private closed = false;

  constructor(
    private readonly config: MailSettings,
    private readonly host: string,
  ) {
    this.timeoutMs = config.emailTimeoutSeconds * 1000;
    const security = config.emailUseSsl ? 'TLS' : config.emailUseTls ? 'STARTTLS' : 'no encryption';
    const auth = config.emailHostUser !== null ? `, as ${config.emailHostUser}` : ', no authentication';
    this.description = `SMTP ${host}:${config.emailPort} (${security}${auth})`;
  }

  private get mailer(): Transporter {
    // A pool made after close() would hold its socket, and the process, open.
    if (this.closed) throw new Error('the mail transport is closed');
    const { config, host } = this;
    return (this.mailerMade ??= nodemailer().createTransport({
      pool: true,
      // One connection, reused while mail keeps coming: the worker sends one mail at a time.
      maxConnections: 1,
      // nodemailer's default reconnects after 100 mails; a new connection waits for the server's
      // greeting (deliberately slow on many servers) and its TLS handshake. Measured with a local
      // server answering after 100 ms: a fifth of a 10,000-mail burst's drain
      // (bench/results/2026-12-01-mail-queue.md). A server that wants fewer per connection
      // closes it, and the pool opens another.
      maxMessages: 1000,
      host,
      port: config.emailPort,
      // EMAIL_USE_SSL: TLS from the first byte. EMAIL_USE_TLS: STARTTLS, required (a server
      // that does not offer it fails the attempt rather than getting the mail in clear).
      // Neither: no STARTTLS, as Django does not attempt it.
      secure: config.emailUseSsl,
      requireTLS: config.emailUseTls,
      ignoreTLS: !config.emailUseTls && !config.emailUseSsl,
      auth: config.emailHostUser !== null ? { user: config.emailHostUser, pass: config.emailHostPassword ?? '' } : undefined,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
    }));
  }

  async send(mail: OutgoingMail, deadlineMs = this.timeoutMs * 3): Promise<MailSent> {
    const info = await this.mailer.sendMail({ ...messageOf(mail), signal: AbortSignal.timeout(deadlineMs) });
    return { response: String(info.response ?? ''), accepted: addresses(info.accepted), rejected: addresses(info.rejected) };
  }

  close(): void {
    this.closed = true;
    this.mailerMade?.close();
  }
}

/**
 * Without EMAIL_HOST: each mail is written to DATA_DIR/emails/ as an .eml
 * file (the whole message, headers and both parts, as an SMTP server would
 * have received it), named by the time and the Message-ID, so a developer
 * or an operator trying Parley out can read what would have been sent.
 */
class FileTransport implements MailTransport {
  readonly kind = 'file';
  readonly description: string;
  private mailerMade: Transporter | null = null;
  private get mailer(): Transporter {
    return (this.mailerMade ??= nodemailer().createTransport({ streamTransport: true, buffer: true, newline: 'unix' }));
  }

  constructor(private readonly dir: string) {
    this.description = `files in ${dir} (EMAIL_HOST is not set)`;
  }

  async send(mail: OutgoingMail): Promise<MailSent> {
    const info = await this.mailer.sendMail(messageOf(mail));
    await fs.promises.mkdir(this.dir, { recursive: true });
    const stamp = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    const name = `${stamp}-${mail.messageId.replace(/^<|@.*$|>$/g, '').replace(/[^A-Za-z0-9._-]/g, '_')}.eml`;
    const file = path.join(this.dir, name);
    // Written aside, then renamed: a reader (a test, a watcher) never sees half a mail.
    const tmp = `${file}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    // Readable by the server's user alone: a mail may hold a live reset or invitation link.
    await fs.promises.writeFile(tmp, info.message as Buffer, { mode: 0o600 });
    await fs.promises.rename(tmp, file);
    return { response: `written to ${file}`, accepted: [mail.to], rejected: [], file };
  }

  close(): void {
    this.mailerMade?.close();
  }
}
