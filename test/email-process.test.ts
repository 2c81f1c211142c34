import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb } from '../src/db/connection';
import { EmailState } from '../src/domain/outgoing-emails';
import { eachDatabase, freshMigratedMysqlDatabase } from './support/databases';
import { runServerToExit, type ServerProcess, startServerProcess } from './support/server-process';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server';

/**
 * The delivery worker as src/main.ts runs it: the start-up line names the
 * transport, mail queued by another process (a row the server did not write)
 * is found by the poll and sent, and a refused setting stops the start.
 */
eachDatabase('mail in the server process', (dialect) => {
  jest.setTimeout(180_000);
  let dataDir: string;
  let databaseUrl = '';
  let dropDatabase = async () => {};
  let smtp: TestSmtpServer;
  let db: Knex | null = null;
  const running: ServerProcess[] = [];

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-mail-process-'));
    if (dialect === 'mysql') {
      const mysql = await freshMigratedMysqlDatabase();
      databaseUrl = mysql.url;
      dropDatabase = mysql.drop;
    }
    smtp = await startSmtpServer();
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.kill();
    await db?.destroy();
    db = null;
    await smtp.stop();
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('names the SMTP server at start, sends mail another process queued, and stops cleanly', async () => {
    const p = await startServerProcess(
      { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, NOREPLY_EMAIL_ADDRESS: 'noreply@chat.example.com', ...smtp.env() },
      150_000,
    );
    running.push(p);
    expect(p.output()).toContain(
      `Mail:          SMTP 127.0.0.1:${smtp.port} (no encryption, no authentication), from noreply@chat.example.com\n`,
    );
    db = createDb({ databaseUrl: databaseUrl || null, dataDir });
    await db('outgoing_emails').insert({
      realm_id: null,
      template: 'test',
      to_address: 'nerissa@example.com',
      from_name: 'Elsewhere',
      subject: 'Queued by another node',
      text_body: 'text',
      html_body: '<p>html</p>',
      created_at: Math.floor(Date.now() / 1000),
      message_token: 'other-node.1',
      next_attempt_at: Date.now(),
    });
    const mail = await smtp.waitForMail((m) => m.to.includes('nerissa@example.com'), 10_000);
    expect(mail.messageId).toBe('<other-node.1@chat.example.com>');
    expect(mail.fromName).toBe('Elsewhere');
    const deadline = Date.now() + 10_000;
    while (Number((await db('outgoing_emails').where({ message_token: 'other-node.1' }).first('state'))!.state) !== EmailState.SENT) {
      if (Date.now() > deadline) throw new Error('not marked sent');
      await new Promise((r) => setTimeout(r, 50));
    }
    running.splice(running.indexOf(p), 1);
    expect(await p.stop()).toBe(0);
  });

  it('killed while the SMTP server holds its message, the server restarted never sends that mail again: it fails as unknown', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, NODE_ID: 'a', ...smtp.env() };
    const first = await startServerProcess({ ...env, EMAIL_TIMEOUT_SECONDS: '30' }, 150_000);
    running.push(first);
    db = createDb({ databaseUrl: databaseUrl || null, dataDir });
    const queue = (to: string, token: string) =>
      db!('outgoing_emails').insert({
        realm_id: null,
        template: 'test',
        to_address: to,
        from_name: 'Parley',
        subject: 'Crash test',
        text_body: 'text',
        html_body: '<p>html</p>',
        created_at: Math.floor(Date.now() / 1000),
        message_token: token,
        next_attempt_at: Date.now(),
      });
    // The whole message reaches the SMTP server, which says nothing: it may have taken it.
    smtp.stall('data');
    await queue('salerio@example.com', 'crash.1');
    const deadline = Date.now() + 10_000;
    while (smtp.attempts.data === 0) {
      if (Date.now() > deadline) throw new Error('the message never reached the server');
      await new Promise((r) => setTimeout(r, 25));
    }
    await first.kill();
    running.splice(running.indexOf(first), 1);
    smtp.accept();
    const row = () => db!('outgoing_emails').where({ message_token: 'crash.1' }).first('state', 'attempts', 'last_error');
    expect(Number((await row())!.state)).toBe(EmailState.SENDING);
    // Restarted (an attempt now lasts 3 s at most: the claim is stale 3 s + the 15 s lease after it was made).
    const second = await startServerProcess({ ...env, EMAIL_TIMEOUT_SECONDS: '1' }, 150_000);
    running.push(second);
    await queue('solanio@example.com', 'crash.2');
    await smtp.waitForMail((m) => m.to.includes('solanio@example.com'), 10_000);
    const until = Date.now() + 40_000;
    while (Number((await row())!.state) !== EmailState.FAILED) {
      if (Date.now() > until) throw new Error('the stale claim was never failed');
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(await row()).toMatchObject({ last_error: expect.stringContaining('Delivery outcome unknown') });
    expect(Number((await row())!.attempts)).toBe(1);
    expect(smtp.attempts.data).toBe(2);
    expect(smtp.mails.map((m) => m.to[0])).toEqual(['solanio@example.com']);
    // The log line follows the row's commit, and crosses the child's stdout pipe after it.
    const logged = Date.now() + 5000;
    while (!second.output().includes('mail not sent, given up') && Date.now() < logged) await new Promise((r) => setTimeout(r, 50));
    expect(second.output()).toContain('mail not sent, given up');
  });

  it('without EMAIL_HOST says mail goes to DATA_DIR/emails/', async () => {
    const p = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl }, 150_000);
    running.push(p);
    expect(p.output()).toMatch(/\nMail: {10}files in .*\/emails \(EMAIL_HOST is not set\), from noreply@127\.0\.0\.1\n/);
  });

  it('refuses EMAIL_USE_TLS with EMAIL_USE_SSL in one line', async () => {
    const r = await runServerToExit({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, EMAIL_USE_TLS: 'true', EMAIL_USE_SSL: 'true' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'Invalid configuration: EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be true (STARTTLS on a plain connection, or TLS from the start: set one), got "true, true"\n',
    );
  });
});
