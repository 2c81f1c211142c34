import { fork, type ChildProcess } from 'node:child_process';
import { SMTPServer } from 'smtp-server';
import { stopChild } from './stop-child';

/**
 * An SMTP server for a benchmark, in a child process of its own (so its
 * work is neither on the measured process's event loop nor in its
 * process.cpuUsage), on 127.0.0.1 and a free port. It accepts every mail and
 * keeps, per mail, the Message-ID header, the envelope's recipients and when
 * the message was accepted (Date.now() as its final "." is answered: the
 * machine's clock, which the parent shares). Nothing is parsed beyond the
 * Message-ID.
 *
 *   const sink = await startSmtpSink();
 *   ... send mail to 127.0.0.1:sink.port ...
 *   const accepted = await sink.accepted();
 *   await sink.stop();
 */
export interface AcceptedMail {
  /** The Message-ID header, with its angle brackets ('' when the mail had none). */
  messageId: string;
  /** RCPT TO, in order. */
  to: string[];
  /** When the server accepted it (milliseconds since the epoch). */
  at: number;
}

export interface SmtpSink {
  port: number;
  /** The child's process id (its CPU: /proc/<pid>/stat). */
  pid: number;
  /** Every mail accepted so far, in the order accepted. */
  accepted(): Promise<AcceptedMail[]>;
  stop(): Promise<void>;
}

type FromChild = { port: number } | { accepted: AcceptedMail[] };

const CHILD_FLAG = '--smtp-sink';

export async function startSmtpSink(): Promise<SmtpSink> {
  const child: ChildProcess = fork(__filename, [CHILD_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () =>
    new Promise<FromChild>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the SMTP sink exited (${code})`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m as FromChild);
      });
    });
  const ready = await next();
  if (!('port' in ready)) throw new Error('the SMTP sink did not report its port');
  return {
    port: ready.port,
    pid: child.pid!,
    accepted: async () => {
      const answer = next();
      child.send('report');
      const m = await answer;
      if (!('accepted' in m)) throw new Error('the SMTP sink did not report its mail');
      return m.accepted;
    },
    stop: () => stopChild(child, (c) => c.send('stop'), 5000),
  };
}

/** The child: the server itself. */
function serve(): void {
  const accepted: AcceptedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    // Not the reverse DNS lookup of 127.0.0.1 at every connection: its time is the resolver's, not Parley's.
    disableReverseLookup: true,
    // Plenty for one pooled client; the default (Infinity) is fine too, stated for the reader.
    maxClients: 16,
    onData(stream, session, callback) {
      let head = '';
      stream.on('data', (c: Buffer) => {
        // The headers end at the first blank line; the Message-ID is among them.
        if (!head.includes('\r\n\r\n')) head += c.toString('latin1');
      });
      stream.on('end', () => {
        const headers = head.slice(0, head.indexOf('\r\n\r\n') + 2 || undefined);
        const messageId = /^message-id:\s*(<[^>\r\n]*>)/im.exec(headers)?.[1] ?? '';
        accepted.push({ messageId, to: session.envelope.rcptTo.map((r) => r.address), at: Date.now() });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.server.address() as { port: number }).port });
  });
  process.on('message', (m) => {
    if (m === 'report') process.send!({ accepted });
    else if (m === 'stop') server.close(() => process.exit(0));
  });
  // The parent gone (killed, crashed): nothing is left listening.
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module && process.argv.includes(CHILD_FLAG)) serve();
