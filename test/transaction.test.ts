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

  it('runs the work again after a deadlock inside the transaction', async () => {
    let runs = 0;
    const result = await inTransaction(t.db, async () => {
      if (++runs === 1) throw Object.assign(new Error('Deadlock found'), { errno: 1213 });
      return 'done';
    });
    expect([result, runs]).toEqual(['done', 2]);
  });
});
