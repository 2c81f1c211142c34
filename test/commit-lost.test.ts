/**
 * A connection lost during COMMIT: the transaction may or may not have
 * committed. These tests lose the answer to a COMMIT that did commit (a TCP
 * proxy in front of MariaDB passes the COMMIT on, then drops the connection
 * instead of the reply), which is what a killed database node or proxy does
 * to an in-flight send. MySQL/MariaDB only: SQLite has no connection to lose.
 */
import { causalRead } from '../src/db/causal-read';
import { onInvalidation } from '../src/db/invalidations';
import { IDLE_CHECK_MS, PING_TIMEOUT_MS } from '../src/db/mysql/idle-check';
import { pipelineWrite } from '../src/db/mysql/pipelined-client';
import { inTransaction, settleLostCommit } from '../src/db/transaction';
import type { Invalidation } from '../src/events/bus';
import { CommitOutcomeUnknownError } from '../src/errors';
import { CommitCutter, databaseBehindCutter, withOneCut } from './support/commit-cutter';
import { eachDatabase, freshDatabase, TestDb } from './support/databases';
import { pending, register } from './support/events';
import { createChannel, startTestServer, TestServer } from './support/server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

eachDatabase('a connection lost during COMMIT', (dialect) => {
  it('never consults the witness of a transaction whose COMMIT was answered', async () => {
    const t = await freshDatabase(dialect);
    let asked = 0;
    const result = await inTransaction(t.db, async (tx) => {
      await tx.trx('dm_groups').insert({ huddle_hash: 'answered', group_size: 1 });
      tx.witness(async () => {
        asked++;
        return true;
      });
      tx.afterLostCommit(async () => {
        asked++;
      });
      return 'saved';
    });
    expect([result, asked]).toEqual(['saved', 0]);
    await t.drop();
  });

  it('asks a witness that finds nothing again until the deadline: a transaction another node applies late is found committed', async () => {
    // What a Galera node killed during COMMIT leaves: its write set reaches the
    // other nodes only once they have evicted it, seconds later. No thread to
    // end (another server answers), so a first look that finds nothing proves nothing.
    const t = await freshDatabase(dialect);
    const looks: boolean[] = [];
    const witness = async (fresh: typeof t.db) => {
      const found = (await fresh('dm_groups').where({ huddle_hash: 'applied late' })).length > 0;
      looks.push(found);
      return found;
    };
    const late = sleep(700).then(() => t.db('dm_groups').insert({ huddle_hash: 'applied late', group_size: 1 }));
    expect(await settleLostCommit(t.db, undefined, witness, Date.now() + 8000)).toBe('committed');
    await late;
    expect(looks.length).toBeGreaterThan(1);
    expect(looks[0]).toBe(false);
    // Never found: "unknown" once the deadline has passed, not before.
    const started = Date.now();
    expect(await settleLostCommit(t.db, undefined, async () => false, started + 1000)).toBe('unknown');
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    await t.drop();
  });

  if (dialect !== 'mysql') return;

  it('gives up on a witness read that does not answer in time, and kills the statement', async () => {
    const t = await freshDatabase(dialect);
    const started = Date.now();
    await expect(causalRead(t.db, t.db.select(t.db.raw('SLEEP(5) AS s')), 300)).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    expect(Date.now() - started).toBeLessThan(3000);
    // Killed on the server, not left running on a pooled connection.
    const [running] = (await t.db.raw("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'select SLEEP(5)%'")) as [
      Array<{ n: number }>,
    ];
    expect(Number(running[0]!.n)).toBe(0);
    await t.drop();
  });

  describe('inTransaction', () => {
    let testDb: TestDb;
    let cutter: CommitCutter;
    beforeAll(async () => {
      ({ testDb, cutter } = await databaseBehindCutter());
    });
    afterAll(() => testDb.drop());

    it('asks the witness, and a transaction it finds committed succeeds once, with its hooks and its own invalidations', async () => {
      const db = testDb.db;
      const published: Invalidation[] = [];
      const off = onInvalidation(db, (inv) => published.push(inv));
      const hooks: string[] = [];
      let runs = 0;
      const result = await withOneCut(cutter, 'arm', () =>
        inTransaction(db, async (tx) => {
          runs++;
          await tx.trx('dm_groups').insert({ huddle_hash: 'witnessed', group_size: 1 });
          tx.afterCommit(() => hooks.push('ran'));
          tx.witness(async (fresh) => (await fresh('dm_groups').where({ huddle_hash: 'witnessed' })).length > 0);
          // One witness speaks for the transaction: a second is not asked.
          tx.witness(async () => {
            hooks.push('second witness');
            return false;
          });
          // Recoveries run once the commit is confirmed, before the after-commit hooks.
          tx.afterLostCommit(async () => {
            hooks.push('recovered');
          });
          return 'saved';
        }),
      );
      off();
      expect([result, runs, hooks]).toEqual(['saved', 1, ['recovered', 'ran']]);
      expect(await db('dm_groups').where({ huddle_hash: 'witnessed' }).count({ n: '*' })).toEqual([{ n: 1 }]);
      // Not the everything-flush of an unknown outcome.
      expect(published).not.toContainEqual({ kind: 'all' });
    });

    it('answers 503 "may or may not" for a transaction without a witness, whose row is there all the same, and drops every cache', async () => {
      const db = testDb.db;
      const published: Invalidation[] = [];
      const off = onInvalidation(db, (inv) => published.push(inv));
      const hooks: string[] = [];
      let runs = 0;
      cutter.arm();
      const attempt = inTransaction(db, async (tx) => {
        runs++;
        await tx.trx('dm_groups').insert({ huddle_hash: 'unwitnessed', group_size: 1 });
        tx.afterCommit(() => hooks.push('ran'));
        tx.afterLostCommit(async () => {
          hooks.push('recovered');
        });
      });
      const err = await attempt.catch((e: unknown) => e);
      off();
      expect(err).toBeInstanceOf(CommitOutcomeUnknownError);
      expect([runs, hooks]).toEqual([1, []]);
      expect(published).toEqual([{ kind: 'all' }]);
      expect(await db('dm_groups').where({ huddle_hash: 'unwitnessed' }).count({ n: '*' })).toEqual([{ n: 1 }]);
    });

    it('runs again, once, a transaction whose pooled connection died before its COMMIT packet reached the server', async () => {
      const db = testDb.db;
      const published: Invalidation[] = [];
      const off = onInvalidation(db, (inv) => published.push(inv));
      const hooks: string[] = [];
      let runs = 0;
      const result = await withOneCut(cutter, 'dropBeforeNextCommit', () =>
        inTransaction(db, async (tx) => {
          runs++;
          await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, 1)', ['never sent']);
          tx.afterCommit(() => hooks.push('ran'));
          tx.witness(async (fresh) => (await fresh('dm_groups').where({ huddle_hash: 'never sent' })).length > 0);
          return 'saved';
        }),
      );
      off();
      expect([result, runs, hooks]).toEqual(['saved', 2, ['ran']]);
      expect(await db('dm_groups').where({ huddle_hash: 'never sent' }).count({ n: '*' })).toEqual([{ n: 1 }]);
      expect(published).not.toContainEqual({ kind: 'all' });
    });

    it('ends the thread still running a lost packet (waiting for a lock) before it runs the work again, so it commits once', async () => {
      const db = testDb.db;
      await db('dm_groups').insert({ huddle_hash: 'locked', group_size: 0 });
      // Another transaction holds the row's lock until the work runs a second time.
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const locker = db.transaction(async (trx) => {
        await trx('dm_groups').where({ huddle_hash: 'locked' }).forUpdate();
        locked();
        await released;
      });
      await isLocked;
      let runs = 0;
      cutter.orphanNextCommit();
      const cutsBefore = cutter.cuts;
      const outcome = await inTransaction(db, async (tx) => {
        if (++runs === 2) release();
        // Held: it waits for the lock on the server, in COMMIT's packet.
        await pipelineWrite(tx.trx, 'UPDATE dm_groups SET group_size = group_size + 1 WHERE huddle_hash = ?', ['locked']);
        tx.witness(async (fresh) => (await fresh('dm_groups').where({ huddle_hash: 'locked' }).first())!.group_size > 0);
        return 'saved';
      }).catch((e: unknown) => e);
      release();
      await locker;
      expect(cutter.cuts - cutsBefore).toBe(1);
      expect([outcome, runs]).toEqual(['saved', 2]);
      expect((await db('dm_groups').where({ huddle_hash: 'locked' }).first())!.group_size).toBe(1);
    });
  });

  describe('POST /messages', () => {
    let t: TestServer;
    let cutter: CommitCutter;
    beforeAll(async () => {
      const behind = await databaseBehindCutter();
      cutter = behind.cutter;
      t = await startTestServer('mysql', behind.testDb);
      await createChannel(t, 'general', [t.cast.owner, t.cast.member]);
    });
    afterAll(async () => {
      t.ctx.queues.close();
      await t.close();
    });

    it('succeeds when the message was saved, and the other subscriber gets it as an event', async () => {
      const { owner, member } = t.cast;
      const client = await register(t, member, { event_types: ['message'] });
      const res = await withOneCut(cutter, 'arm', () =>
        t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'cut', content: 'saved despite the cut' }),
      );
      expect(res.status).toBe(200);
      const events = await pending(t, client);
      expect(events.map((e) => [e.type, e.message?.id])).toEqual([['message', res.body.id]]);
      const stored = await t.ctx.db('messages').where({ content: 'saved despite the cut' }).pluck('id');
      expect(stored).toEqual([res.body.id]);
    });

    it('finds the saved message by its row when the one packet that carried it never answered with its id', async () => {
      const { owner, member } = t.cast;
      // Not the channel's first message (that one asks for its id before COMMIT): the whole send is one packet.
      expect((await t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'cut', content: 'before' })).status).toBe(200);
      const client = await register(t, member, { event_types: ['message'] });
      const res = await withOneCut(cutter, 'arm', () =>
        t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'cut', content: 'one packet, cut' }),
      );
      expect(res.status).toBe(200);
      const stored = await t.ctx.db('messages').where({ content: 'one packet, cut' }).pluck('id');
      expect(stored).toEqual([res.body.id]);
      const events = await pending(t, client);
      expect(events.map((e) => [e.type, e.message?.id])).toEqual([['message', res.body.id]]);
    });

    it('a send whose pooled connection died before its packet left answers 200, stored once with one event, every time', async () => {
      const { owner, member } = t.cast;
      expect((await t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'dead', content: 'first' })).status).toBe(200);
      const client = await register(t, member, { event_types: ['message'] });
      const ids: number[] = [];
      for (const n of [1, 2, 3]) {
        const res = await withOneCut(cutter, 'dropBeforeNextCommit', () =>
          t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'dead', content: `dropped ${n}` }),
        );
        expect(res.status).toBe(200);
        expect(
          await t.ctx
            .db('messages')
            .where({ content: `dropped ${n}` })
            .pluck('id'),
        ).toEqual([res.body.id]);
        ids.push(res.body.id);
      }
      const events = await pending(t, client);
      expect(events.map((e) => [e.type, e.message?.id])).toEqual(ids.map((id) => ['message', id]));
    });

    it('a move whose COMMIT answer is lost succeeds, and both its notices, whose ids were lost with it, go out as events', async () => {
      const { owner, member } = t.cast;
      const sent = await t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'moving', content: 'to be moved' });
      expect(sent.status).toBe(200);
      const client = await register(t, member, { event_types: ['message', 'update_message'] });
      const res = await withOneCut(cutter, 'arm', () =>
        t.api.patch(`/messages/${sent.body.id}`, owner, {
          topic: 'moved',
          propagate_mode: 'change_all',
          send_notification_to_old_thread: true,
          send_notification_to_new_thread: true,
        }),
      );
      expect(res.status).toBe(200);
      // Both notices are stored: the new thread's (the witness that decides) and the old thread's (found by its row after).
      const notices = (await t.ctx.db('messages').where('id', '>', sent.body.id).orderBy('id').select('id', 'topic')).map((r) => [
        Number(r.id),
        r.topic,
      ]);
      expect(notices.map(([, topic]) => topic)).toEqual(['moved', 'moving']);
      const events = await pending(t, client);
      expect(events.map((e) => [e.type, e.message?.id])).toEqual([
        ['update_message', undefined],
        ['message', notices[0]![0]],
        ['message', notices[1]![0]],
      ]);
    });

    it('a pooled connection that went silent while idle is found out within a bound, and the next send completes on a fresh one', async () => {
      const { owner } = t.cast;
      expect((await t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'silent', content: 'before' })).status).toBe(
        200,
      );
      // Every connection in the pool now gets no answer, and no close either.
      cutter.stallOpenConnections();
      await sleep(IDLE_CHECK_MS + 200);
      const started = Date.now();
      const send = t.api.post('/messages', owner, { type: 'stream', to: 'general', topic: 'silent', content: 'after the silence' });
      const res = await Promise.race([send, sleep(PING_TIMEOUT_MS + 4000).then(() => 'no answer' as const)]);
      expect(res === 'no answer' ? res : res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(PING_TIMEOUT_MS + 2000);
      expect(await t.ctx.db('messages').where({ content: 'after the silence' }).count({ n: '*' })).toEqual([{ n: 1 }]);
    });
  });
});
