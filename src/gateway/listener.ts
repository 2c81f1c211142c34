import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import TurndownService from 'turndown';
import { type AddressObject, simpleParser } from 'mailparser';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { AppContext } from '../context';
import { ApiError } from '../errors';
import { checkGatewayRecipient, doProcessIncomingEmail, GatewayRefusal, type IncomingMail } from '../actions/incoming-email';

/** The running listener: its port (EMAIL_GATEWAY_PORT=0 picks a free one) and how to stop it. */
export interface EmailGateway {
  port: number;
  close(): Promise<void>;
}

/** An SMTP reply smtp-server sends for a refused command. */
function smtpError(code: number, text: string): Error & { responseCode: number } {
  return Object.assign(new Error(text), { responseCode: code });
}

const refusalReply = (r: GatewayRefusal) => smtpError(r.code, r.response);

/**
 * The incoming email gateway (docs/architecture/email-gateway.md), as
 * Zulip's email_mirror_server: an SMTP listener for the organization's mail
 * server to hand mail to. Each RCPT TO is checked at once (an address that
 * is not one of the gateway's, or a token no address has, is refused with
 * 550 before any DATA is taken); the mail's size is announced (SIZE) and
 * enforced on the bytes received (552); an accepted mail is parsed and
 * posted (src/actions/incoming-email.ts) before the reply to DATA, so the
 * sending server learns of a refusal (5xx with the reason) instead of
 * Parley dropping the mail silently. No failure of one mail reaches the
 * listener: an unexpected error is answered 451 and logged.
 */
/** Connections at once: a mail server hands the gateway mail over a few; more is a flood. */
const MAX_CLIENTS = 50;

export async function startEmailGateway(ctx: AppContext, log: Logger): Promise<EmailGateway> {
  const config = ctx.config;
  const maxBytes = config.emailGatewayMaxMessageBytes;
  const tls = config.emailGatewayTls;
  const server = new SMTPServer({
    name: new URL(config.externalUrl).hostname,
    banner: 'Parley email gateway',
    size: maxBytes,
    // Nobody logs in: the address's token is the credential.
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? { key: fs.readFileSync(tls.keyFile), cert: fs.readFileSync(tls.certFile) } : {}),
    // The replies carry their own enhanced status codes (Zulip's texts have them).
    hideENHANCEDSTATUSCODES: true,
    logger: false,
    // On shutdown, mail being received may finish within the server's shutdown bound.
    closeTimeout: config.shutdownTimeoutMs,
    // Each connection may hold a whole mail in memory while it is received: a bound on them.
    maxClients: MAX_CLIENTS,
    onRcptTo(address, _session, callback) {
      checkGatewayRecipient(ctx, address.address, { rateLimit: true }).then(
        () => callback(),
        (err: unknown) => callback(unexpected(err, 'rcpt')),
      );
    },
    onData(stream, session, callback) {
      readCapped(stream, maxBytes)
        .then(async (raw) => {
          if (raw === null) return callback(smtpError(552, `5.3.4 Message exceeds the maximum size of ${maxBytes} bytes`));
          const mail = await parseMail(raw);
          await deliver(session, mail);
          callback();
        })
        .catch((err: unknown) => callback(unexpected(err, 'data')));
    },
  });

  /** Each recipient accepted at RCPT gets the mail; the first refusal is the reply (after the others were tried). */
  async function deliver(session: SMTPServerSession, mail: IncomingMail): Promise<void> {
    let refusal: GatewayRefusal | null = null;
    let delivered = 0;
    for (const rcpt of session.envelope.rcptTo) {
      try {
        const { messageId } = await doProcessIncomingEmail(ctx, rcpt.address, mail);
        delivered++;
        log.info({ message_id: messageId }, 'email gateway: mail posted');
      } catch (err) {
        if (err instanceof GatewayRefusal) {
          log.info({ reason: err.message }, 'email gateway: mail refused');
          refusal ??= err;
        } else if (err instanceof ApiError && err.status < 500) {
          // The send refused it (too long, a channel gone since RCPT, …): a permanent refusal,
          // which the sending server reports to its sender instead of sending again.
          log.info({ reason: err.message }, 'email gateway: mail refused by the send');
          refusal ??= new GatewayRefusal(550, '5.6.0', err.message);
        } else if (delivered > 0) {
          // Posted for an earlier recipient already: a temporary failure now would have the
          // sending server send it again to all of them, so this one is logged and dropped.
          log.error({ err }, 'email gateway: mail not posted for one of its recipients');
        } else throw err;
      }
    }
    // A mail posted for one recipient is not refused for another's sake:
    // the sending server would send it again to all of them.
    if (refusal && delivered === 0) throw refusal;
  }

  function unexpected(err: unknown, stage: string): Error {
    if (err instanceof GatewayRefusal) return refusalReply(err);
    log.error({ err, stage }, 'email gateway: mail not processed');
    return smtpError(451, '4.3.0 Temporary server error, try again later');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.emailGatewayPort ?? 0, config.emailGatewayHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A connection's socket error (a client hanging up) is the connection's, not the listener's.
  server.on('error', (err) => log.warn({ err }, 'email gateway: connection error'));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The mail's bytes, or null once more than `maxBytes` arrived (the rest is
 * read and dropped, so the connection stays in step): never more than the
 * limit is held, whatever the client announced.
 */
async function readCapped(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of stream as Readable) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > maxBytes) over = true;
    if (!over) chunks.push(buf);
  }
  return over || stream.sizeExceeded ? null : Buffer.concat(chunks);
}

const addressesOf = (a: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value.map((v) => v.address ?? '')).filter(Boolean);

/** The HTML converted to Markdown at most: far more than a message holds, far less than a mail may. */
const MAX_HTML_CHARS = 256 * 1024;

/**
 * HTML to Markdown, as Zulip converts an HTML part (html2text): emphasis,
 * links and lists survive as the Markdown a message is written in; what a
 * page has beside its text (styles, scripts, its head) is dropped.
 */
const htmlToMarkdown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' }).remove([
  'style',
  'script',
  'head',
  'title',
]);

/**
 * The parts of a mail the gateway uses: the text part, and the HTML part as
 * Markdown (for addresses that prefer HTML, and mails with no text part).
 * mailparser fills `text` from the HTML part when a mail has no text part;
 * such a text is its own conversion of the HTML, so it is told apart by
 * converting the HTML the same way, and not taken for a text part. Every
 * part with a file name is an attachment, inline images included, as
 * Zulip's walk of the parts takes them.
 */
async function parseMail(raw: Buffer): Promise<IncomingMail> {
  const parsed = await simpleParser(raw, { skipTextToHtml: true, skipImageLinks: true, keepCidLinks: true });
  const from = parsed.from;
  const html = typeof parsed.html === 'string' ? parsed.html : null;
  let text = parsed.text ?? null;
  let htmlAsMarkdown: string | null = null;
  if (html !== null) {
    const converted = await simpleParser(
      Buffer.from(`Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${html}`, 'utf8'),
    );
    if (text !== null && text === (converted.text ?? '')) text = null;
    // Converted on the event loop: only as much HTML as can make a message (whose limit is
    // 10,000 characters) is, however long the mail's part.
    htmlAsMarkdown = htmlToMarkdown.turndown(html.length > MAX_HTML_CHARS ? html.slice(0, MAX_HTML_CHARS) : html);
  }
  return {
    // As the header reads, decoded, without the quotes mailparser's `text` puts around names.
    fromHeader: (from?.value ?? []).map((v) => (v.name ? `${v.name} <${v.address ?? ''}>` : (v.address ?? ''))).join(', '),
    fromAddresses: addressesOf(from),
    subject: parsed.subject ?? '',
    text,
    htmlAsMarkdown,
    attachments: parsed.attachments
      .filter((a) => a.filename)
      .map((a) => ({ fileName: a.filename!, contentType: a.contentType, content: a.content })),
  };
}
