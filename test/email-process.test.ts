import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb } from '../src/db/connection';
import { EmailState } from '../src/domain/outgoing-emails';
import { eachDatabase, freshMysqlDatabase } from './support/databases';
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
      const mysql = await freshMysqlDatabase();
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
