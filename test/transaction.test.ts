import { invalidates, onInvalidation } from '../src/db/invalidations';
import { inTransaction } from '../src/db/transaction';
import type { Invalidation } from '../src/events/bus';
import { CommitOutcomeUnknownError, DatabaseUnavailableError } from '../src/errors';
import { toErrorResponse } from '../src/http/errors';
import { eachDatabase, freshDatabase, TestDb } from './support/databases';

eachDatabase('inTransaction', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());

  it('never runs committed work again, even when an after-commit hook throws what looks like a deadlock', async () => {
    let runs = 0;
    const deadlock = Object.assign(new Error('hook failed'), { errno: 1213 });
    const attempt = inTransaction(t.db, async (tx) => {
      runs++;
      await tx.trx('dm_groups').insert({ huddle_hash: 'after-commit-hook', group_size: 1 });
      tx.afterCommit(() => {
        throw deadlock;
      });
    });
    await expect(attempt).rejects.toBe(deadlock);
    expect(runs).toBe(1);
    expect(await t.db('dm_groups').where({ huddle_hash: 'after-commit-hook' }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('runs the work again after a deadlock inside the transaction, with only the committed attempt and its hooks kept', async () => {
    let runs = 0;
    const hooks: number[] = [];
    const result = await inTransaction(t.db, async (tx) => {
      const attempt = ++runs;
      await tx.trx('dm_groups').insert({ huddle_hash: `retried-${attempt}`, group_size: 1 });
      tx.afterCommit(() => hooks.push(attempt));
      if (attempt === 1) throw Object.assign(new Error('Deadlock found'), { errno: 1213 });
      return 'done';
    });
    expect([result, runs, hooks]).toEqual(['done', 2, [2]]);
    expect(await t.db('dm_groups').where('huddle_hash', 'like', 'retried-%').pluck('huddle_hash')).toEqual(['retried-2']);
  });

  it('runs no hook of a transaction that rolls back, and does not retry other errors', async () => {
    let runs = 0;
    const hooks: string[] = [];
    const failure = new Error('not retryable');
    const attempt = inTransaction(t.db, async (tx) => {
      runs++;
      await tx.trx('dm_groups').insert({ huddle_hash: 'rolled-back', group_size: 1 });
      tx.afterCommit(() => hooks.push('ran'));
      throw failure;
    });
    await expect(attempt).rejects.toBe(failure);
    expect([runs, hooks]).toEqual([1, []]);
    expect(await t.db('dm_groups').where({ huddle_hash: 'rolled-back' }).count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  it("publishes a transaction's invalidations to its own database's sinks once it commits, and a rolled-back one's nowhere", async () => {
    // A second database: the sinks travel with each handle, not in a registry that every transaction reaches.
    const other = await freshDatabase(dialect);
    const [mine, theirs]: Invalidation[][] = [[], []];
    const offs = [onInvalidation(t.db, (inv) => mine.push(inv)), onInvalidation(other.db, (inv) => theirs.push(inv))];
    try {
      await inTransaction(t.db, async (tx) => {
        invalidates(tx.trx, { kind: 'user', userIds: [1] }, { kind: 'user', userIds: [2] });
        // Carried by the transaction until it commits.
        expect(mine).toEqual([]);
      });
      // A transaction opened some other way (a script, a test) publishes once it commits.
      await t.db.transaction(async (trx) => invalidates(trx, { kind: 'channel', channelIds: [3] }));
      await t.db
        .transaction(async (trx) => {
          invalidates(trx, { kind: 'channel', channelIds: [4] });
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      // A bare handle's statement is its own commit.
      invalidates(other.db, { kind: 'realm', realmId: 5 });
      expect(mine).toEqual([
        { kind: 'user', userIds: [1, 2] },
        { kind: 'channel', channelIds: [3] },
      ]);
      expect(theirs).toEqual([{ kind: 'realm', realmId: 5 }]);
    } finally {
      for (const off of offs) off();
      await other.drop();
    }
  });

  it('runs the work again when a Galera node without quorum refuses a statement (1047)', async () => {
    let runs = 0;
    const result = await inTransaction(t.db, async (tx) => {
      const attempt = ++runs;
      await tx.trx('dm_groups').insert({ huddle_hash: `not-ready-${attempt}`, group_size: 1 });
      if (attempt === 1) throw Object.assign(new Error('WSREP has not yet prepared node for application use'), { errno: 1047 });
      return 'done';
    });
    expect([result, runs]).toEqual(['done', 2]);
    expect(await t.db('dm_groups').where('huddle_hash', 'like', 'not-ready-%').pluck('huddle_hash')).toEqual(['not-ready-2']);
  });

  it('gives up with a 503 once the database stays unavailable for its whole budget', async () => {
    let runs = 0;
    const attempt = inTransaction(t.db, async () => {
      runs++;
      throw Object.assign(new Error('WSREP has not yet prepared node for application use'), { errno: 1047 });
    });
    await expect(attempt).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // Backing off (50 ms doubling, at most 1 s) over the 8 s budget: a handful of attempts, not a busy loop.
    expect(runs).toBeGreaterThan(3);
    expect(runs).toBeLessThan(20);
  }, 20_000);

  if (dialect === 'mysql') {
    const connectionId = async (trx: import('knex').Knex.Transaction) =>
      ((await trx.raw('SELECT CONNECTION_ID() AS id')) as unknown as [Array<{ id: number }>])[0][0]!.id;

    it('runs the work again when its connection is killed before COMMIT, and stores it once', async () => {
      let runs = 0;
      const result = await inTransaction(t.db, async (tx) => {
        const attempt = ++runs;
        await tx.trx('dm_groups').insert({ huddle_hash: `killed-${attempt}`, group_size: 1 });
        if (attempt === 1) {
          await t.db.raw('KILL CONNECTION ?', [await connectionId(tx.trx)]);
          await tx.trx('dm_groups').insert({ huddle_hash: 'never', group_size: 1 });
        }
        return 'done';
      });
      expect([result, runs]).toEqual(['done', 2]);
      expect(await t.db('dm_groups').where('huddle_hash', 'like', 'killed-%').pluck('huddle_hash')).toEqual(['killed-2']);
    });

    it('never replays work whose connection was lost during COMMIT: the outcome is unknown, the answer a 503, the caches dropped', async () => {
      let runs = 0;
      const published: Invalidation[] = [];
      const off = onInvalidation(t.db, (inv) => published.push(inv));
      const attempt = inTransaction(t.db, async (tx) => {
        runs++;
        await tx.trx('dm_groups').insert({ huddle_hash: 'commit-lost', group_size: 1 });
        // The work is done; COMMIT goes out on a connection the server has just closed.
        await t.db.raw('KILL CONNECTION ?', [await connectionId(tx.trx)]);
      });
      const err = await attempt.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CommitOutcomeUnknownError);
      expect(runs).toBe(1);
      const { status, body, headers } = toErrorResponse(err);
      expect([status, body.code, headers['Retry-After']]).toEqual([503, 'SERVER_NOT_READY', '1']);
      expect(String(body.msg)).toMatch(/may or may not have been saved/);
      // Had it committed, what it changed could be stale in any cache.
      off();
      expect(published).toEqual([{ kind: 'all' }]);
    });
  }

  it('answers a read that met a lost connection with a 503 the client may retry, not a 500', () => {
    const lost = Object.assign(new Error('Connection lost: The server closed the connection.'), {
      code: 'PROTOCOL_CONNECTION_LOST',
      fatal: true,
    });
    const timeout = Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' });
    for (const err of [lost, timeout, Object.assign(new Error('WSREP not ready'), { errno: 1047 })]) {
      const { status, body, headers } = toErrorResponse(err);
      expect([status, body, headers]).toEqual([
        503,
        { result: 'error', msg: 'The database is unavailable; try again shortly.', code: 'SERVER_NOT_READY' },
        { 'Retry-After': '1' },
      ]);
    }
    expect(toErrorResponse(new Error('something else')).status).toBe(500);
  });
});
