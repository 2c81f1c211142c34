import crypto from 'node:crypto';
import type { Config } from '../config';
import { MAIL_ADDRESS } from '../config/email';
import { messageIdOf } from '../domain/outgoing-emails';
import { ApiError } from '../errors';
import { describeMailError } from '../mail/errors';
import { createMailTransport } from '../mail/transport';

export const SEND_TEST_EMAIL_USAGE = `  send-test-email ADDRESS                  send one mail to ADDRESS through the configured transport
                                           (EMAIL_HOST, or DATA_DIR/emails/ without it) at once,
                                           not through the queue, and print what the SMTP server
                                           answered, or the exact error (exit 1)`;

/**
 * send-test-email ADDRESS: one mail through the transport the server would
 * use, outside the queue and the database, so what an operator reads is the
 * SMTP server's own answer to this attempt: its final response line and the
 * recipients it accepted and rejected, or the error (refused connection, TLS,
 * credentials refused, with the server's words). Returns the exit code.
 */
export async function sendTestEmailCommand(config: Config, positionals: string[]): Promise<number> {
  const [address, ...extra] = positionals;
  if (address === undefined || extra.length > 0) throw new ApiError('Usage: send-test-email ADDRESS');
  if (!MAIL_ADDRESS.test(address)) throw new ApiError(`${JSON.stringify(address)} is not an email address.`);
  const transport = createMailTransport(config);
  const messageId = messageIdOf(`test.${crypto.randomBytes(12).toString('hex')}`, config.noreplyEmailAddress);
  process.stdout.write(`Sending a test email to ${address} from ${config.noreplyEmailAddress} through ${transport.description}…\n`);
  try {
    const sent = await transport.send({
      from: { name: 'Parley', address: config.noreplyEmailAddress },
      to: address,
      subject: 'Parley test email',
      text: testText(config),
      html: `<p>${escape(testText(config)).replace(/\n\n/g, '</p><p>')}</p>`,
      messageId,
    });
    process.stdout.write(
      [
        transport.kind === 'smtp' ? `Server answered: ${sent.response}` : `Written: ${sent.file}`,
        `Accepted: ${sent.accepted.join(', ') || '(none)'}`,
        `Rejected: ${sent.rejected.join(', ') || '(none)'}`,
        `Message-ID: ${messageId}`,
      ].join('\n') + '\n',
    );
    return sent.accepted.length > 0 ? 0 : 1;
  } catch (err) {
    process.stderr.write(`Sending failed: ${describeMailError(err)}\n`);
    return 1;
  } finally {
    transport.close();
  }
}

function testText(config: Config): string {
  return `This is a test email from the Parley server at ${config.externalUrl}.\n\nIf you received it, outgoing mail works.`;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
