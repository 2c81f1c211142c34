import { inTransaction } from '../src/db/transaction';
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
});
