import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './support/cli';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server';

/**
 * `send-test-email ADDRESS` as an operator runs it: one mail through the
 * configured transport, and exactly what the SMTP server answered, or the
 * error that stopped it, with a non-zero exit code. It needs no database.
 */
describe('send-test-email', () => {
  let smtp: TestSmtpServer;
  let dataDir: string;
  beforeAll(async () => {
    smtp = await startSmtpServer({ auth: { user: 'parley', pass: 's3cret' } });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-email-'));
  });
  afterAll(async () => {
    await smtp.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  afterEach(() => smtp.accept());

  const env = (over: Record<string, string> = {}) => ({
    DATA_DIR: dataDir,
    NOREPLY_EMAIL_ADDRESS: 'noreply@chat.example.com',
    ...smtp.env(),
    ...over,
  });

  it("sends one mail and prints the server's answer and the accepted recipients", async () => {
    const r = await runCli(['send-test-email', 'iago@example.com'], env());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const mail = await smtp.waitForMail((m) => m.to.includes('iago@example.com'));
    expect(mail.subject).toBe('Parley test email');
    expect(mail.from).toBe('noreply@chat.example.com');
    expect(r.stdout).toBe(
      [
        `Sending a test email to iago@example.com from noreply@chat.example.com through SMTP 127.0.0.1:${smtp.port} (no encryption, as parley)…`,
        'Server answered: 250 OK: message queued',
        'Accepted: iago@example.com',
        'Rejected: (none)',
        `Message-ID: ${mail.messageId}`,
        '',
      ].join('\n'),
    );
    // Not through the queue: no database was made.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it("prints the server's refusal of the recipient, exit 1", async () => {
    smtp.refuseWith(550, '5.1.1 <nobody@example.com>: Recipient address rejected');
    const r = await runCli(['send-test-email', 'nobody@example.com'], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "Sending failed: Can't send mail - all recipients were rejected: 550 5.1.1 <nobody@example.com>: Recipient address rejected (EENVELOPE)\n",
    );
  });

  it("prints the server's refusal of the credentials", async () => {
    const r = await runCli(['send-test-email', 'iago@example.com'], env({ EMAIL_HOST_PASSWORD: 'wrong' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Sending failed: Invalid login: 535 5.7.8 Authentication credentials invalid (EAUTH)\n');
  });

  it('prints the connection error against a closed port', async () => {
    const port = await closedPort();
    const r = await runCli(['send-test-email', 'iago@example.com'], env({ EMAIL_PORT: String(port) }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`Sending failed: connect ECONNREFUSED 127.0.0.1:${port} (ESOCKET, ECONNREFUSED)\n`);
  });

  it('without EMAIL_HOST, writes the mail to DATA_DIR/emails/ and says where', async () => {
    const r = await runCli(['send-test-email', 'iago@example.com'], {
      DATA_DIR: dataDir,
      NOREPLY_EMAIL_ADDRESS: 'noreply@chat.example.com',
    });
    expect(r.code).toBe(0);
    const file = /^Written: (.+\.eml)$/m.exec(r.stdout)?.[1];
    expect(file).toBeDefined();
    expect(path.dirname(file!)).toBe(path.join(dataDir, 'emails'));
    expect(fs.readFileSync(file!, 'utf8')).toContain('Subject: Parley test email');
    fs.rmSync(path.join(dataDir, 'emails'), { recursive: true });
  });

  it('refuses a malformed address, and EMAIL_USE_TLS with EMAIL_USE_SSL', async () => {
    const bad = await runCli(['send-test-email', 'not an address'], env());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('"not an address" is not an email address.\n');
    const both = await runCli(['send-test-email', 'iago@example.com'], env({ EMAIL_USE_TLS: 'true', EMAIL_USE_SSL: 'true' }));
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be true');
  });
});

/** A port nothing listens on (just freed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
