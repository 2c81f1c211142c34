import fs from 'node:fs';
import path from 'node:path';
import type Database from '@rocicorp/zero-sqlite3';
import type { Knex } from 'knex';
import { RoutedSqliteClient } from '../src/db/sqlite/routed-client';
import { statementCacheStats } from '../src/db/sqlite/statement-cache';
import { inTransaction } from '../src/db/transaction';
import { freshDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';

/** The routing client behind a SQLite knex (src/db/sqlite/routed-client.ts). */
const routedClient = (db: Knex): RoutedSqliteClient => {
  if (!(db.client instanceof RoutedSqliteClient)) throw new Error('not the routed SQLite client');
  return db.client;
};

/** The writer: the one connection of the pool, borrowed and given back. */
async function writerOf(db: Knex): Promise<Database.Database> {
  const conn = (await db.client.acquireConnection()) as Database.Database;
  await db.client.releaseConnection(conn);
  return conn;
}

const readStats = (db: Knex) =>
  routedClient(db)
    .readerConnections()
    .map((r) => statementCacheStats(r))
    .reduce((a, s) => ({ prepared: a.prepared + s.prepared, reused: a.reused + s.reused }), { prepared: 0, reused: 0 });

describe('SQLite: one writer, read-only readers', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
  });
  afterAll(() => t.close());

  // The reads go through GET /users/{id}, which reads the row (GET /users/me would answer from
  // the caller cache, and these raw writes publish no invalidation).
  const fullName = async (id: number) => (await t.api.get(`/users/${id}`, t.cast.owner)).body.user.full_name as string;

  it('answers a GET while a write transaction is held open on the writer, from the last commit', async () => {
    const before = await fullName(t.cast.member.id);
    const trx = await t.ctx.db.transaction();
    try {
      await trx('users').where({ id: t.cast.member.id }).update({ full_name: 'Renamed Inside' });
      // Were reads queued behind the writer, this would wait for the commit below: forever.
      const during = await t.api.get(`/users/${t.cast.member.id}`, t.cast.owner);
      expect(during.status).toBe(200);
      expect(during.body.user.full_name).toBe(before);
      // Inside the transaction, its own write is seen.
      expect(await trx('users').where({ id: t.cast.member.id }).first('full_name')).toEqual({ full_name: 'Renamed Inside' });
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    expect(await fullName(t.cast.member.id)).toBe('Renamed Inside');
  });

  it('lets reads through while a send waits for the held writer, and shows the message once it commits', async () => {
    const narrow = JSON.stringify([{ operator: 'channel', operand: 'general' }]);
    await t.api.post('/users/me/subscriptions', t.cast.owner, { subscriptions: JSON.stringify([{ name: 'general' }]) });
    const trx = await t.ctx.db.transaction();
    const send = t.api.post('/messages', t.cast.owner, { type: 'stream', to: 'general', topic: 'held', content: 'after the commit' });
    let sendDone = false;
    void send.then(() => (sendDone = true));
    const during = await t.api.get('/messages', t.cast.owner, { anchor: 'newest', num_before: 5, num_after: 0, narrow });
    expect(during.status).toBe(200);
    expect(during.body.messages.map((m: { content: string }) => m.content)).not.toContain('<p>after the commit</p>');
    expect(sendDone).toBe(false); // the send is queued behind the held writer
    await trx.commit();
    const sent = await send;
    expect(sent.status).toBe(200);
    const after = await t.api.get('/messages', t.cast.owner, { anchor: 'newest', num_before: 5, num_after: 0, narrow });
    expect(after.body.messages.map((m: { id: number }) => m.id)).toContain(sent.body.id);
  });

  it('sees every commit in the read that follows it', async () => {
    for (let i = 0; i < 20; i++) {
      const sent = await t.api.post('/messages', t.cast.owner, { type: 'stream', to: 'general', topic: 'visibility', content: `m${i}` });
      const read = await t.api.get(`/messages/${sent.body.id}`, t.cast.owner);
      expect([read.status, read.body.message?.content]).toEqual([200, `<p>m${i}</p>`]);
      await inTransaction(t.ctx.db, async (tx) => {
        await tx
          .trx('users')
          .where({ id: t.cast.moderator.id })
          .update({ full_name: `Moderator ${i}` });
      });
      expect(await fullName(t.cast.moderator.id)).toBe(`Moderator ${i}`);
    }
  });

  it('runs reads outside transactions on a read-only connection, and prepares each statement once per connection', async () => {
    const query = { anchor: 'newest', num_before: 20, num_after: 0 };
    await t.api.get('/messages', t.cast.owner, query);
    const first = readStats(t.ctx.db);
    await t.api.get('/messages', t.cast.owner, query);
    await t.api.get('/messages', t.cast.owner, query);
    const later = readStats(t.ctx.db);
    expect(routedClient(t.ctx.db).readerConnections().length).toBe(1);
    expect(later.prepared).toBe(first.prepared); // nothing prepared again
    expect(later.reused).toBeGreaterThan(first.reused);

    const writer = await writerOf(t.ctx.db);
    const send = () => t.api.post('/messages', t.cast.owner, { type: 'stream', to: 'general', topic: 'cache', content: 'again' });
    await send();
    const w1 = statementCacheStats(writer);
    await send();
    const w2 = statementCacheStats(writer);
    expect(w2.prepared).toBe(w1.prepared);
    expect(w2.reused).toBeGreaterThan(w1.reused);
  });

  it('sends every write outside a transaction to the writer (a reader refuses writes)', async () => {
    const reader = routedClient(t.ctx.db).readerConnections()[0]!;
    expect(reader.readonly).toBe(true);
    expect(() => reader.prepare('DELETE FROM push_tokens').run()).toThrow(/readonly/);

    // POST and DELETE /users/me/apns_device_token write on ctx.db, outside any transaction.
    const token = 'ab'.repeat(32);
    const added = await t.api.post('/users/me/apns_device_token', t.cast.member, { token, appid: 'org.example.app' });
    expect(added.status).toBe(200);
    expect(await t.ctx.db('push_tokens').where({ user_id: t.cast.member.id }).pluck('token')).toEqual([token]);
    expect((await t.api.delete('/users/me/apns_device_token', t.cast.member, { token })).status).toBe(200);
    expect(await t.ctx.db('push_tokens').where({ user_id: t.cast.member.id }).pluck('token')).toEqual([]);

    // A statement that reads like a SELECT but writes (a CTE before an UPDATE) is SQLite's call: the writer.
    await t.ctx.db.raw('WITH target(id) AS (SELECT ?) UPDATE users SET full_name = ? WHERE id IN (SELECT id FROM target)', [
      t.cast.guest.id,
      'Guest Via CTE',
    ]);
    expect((await t.api.get('/users/me', t.cast.guest)).body.full_name).toBe('Guest Via CTE');
  });
});

describe('SQLite: the WAL stays bounded while readers read', () => {
  it('checkpoints as it goes: 24 MB written in small commits leave a WAL of a few MB', async () => {
    const { db, drop } = await freshDatabase('sqlite');
    try {
      await db.schema.createTable('wal_probe', (table) => {
        table.increments('id');
        table.binary('payload');
      });
      const payload = Buffer.alloc(8192, 7);
      for (let i = 0; i < 3000; i++) {
        await db('wal_probe').insert({ payload });
        if (i % 10 === 0) expect(await db('wal_probe').count({ n: '*' })).toEqual([{ n: i + 1 }]);
      }
      expect(routedClient(db).readerConnections().length).toBe(1);
      const file = (await writerOf(db)).name;
      const wal = fs.statSync(`${file}-wal`).size;
      expect(wal).toBeLessThan(8 * 1024 * 1024);
      expect(path.basename(file)).toBe('parley.sqlite3');
    } finally {
      await drop();
    }
  });
});
