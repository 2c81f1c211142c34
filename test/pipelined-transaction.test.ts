/**
 * Transactions on MySQL/MariaDB send BEGIN with their first statement and
 * held writes with their next statement or COMMIT
 * (src/db/mysql/pipelined-client.ts). Each knex 'query' event below is one
 * packet, one round trip. On SQLite a held write simply runs at once: the
 * same expectations on what is stored hold on both.
 */
import type { Knex } from 'knex';
import { createDb } from '../src/db/connection';
import { pipelineWrite } from '../src/db/mysql/pipelined-client';
import { inTransaction } from '../src/db/transaction';
import { insertMessage, insertUserMessages, type NewMessageRow } from '../src/queries/messages';
import { insertSearchRows } from '../src/queries/search-index';
import { eachDatabase, freshDatabase, freshMigratedMysqlDatabase, TestDb } from './support/databases';
import { createChannel, startTestServer } from './support/server';

/** The statement texts of the packets `work` sends through `db`. */
async function packets<T>(db: Knex, work: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const sent: string[] = [];
  const onQuery = (q: { sql: string }) => sent.push(q.sql);
  db.on('query', onQuery);
  try {
    return { result: await work(), sent };
  } finally {
    db.removeListener('query', onQuery);
  }
}

const hashes = (db: Knex) => db('dm_groups').orderBy('huddle_hash').pluck('huddle_hash');

eachDatabase('a transaction that holds writes for its next packet', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await freshDatabase(dialect);
  });
  afterEach(() => t.drop());

  it('reads its own held writes, and stores them at COMMIT', async () => {
    const seen = await inTransaction(t.db, async (tx) => {
      await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?), (?, ?)', ['held-a', 1, 'held-b', 2]);
      return tx.trx('dm_groups').orderBy('huddle_hash').pluck('huddle_hash');
    });
    expect(seen).toEqual(['held-a', 'held-b']);
    expect(await hashes(t.db)).toEqual(['held-a', 'held-b']);
  });

  it('stores nothing of a transaction whose held write fails at COMMIT, and leaves no transaction open', async () => {
    // One connection: the statement after the failure runs on the connection it happened on.
    const one = dialect === 'mysql' ? await freshMigratedMysqlDatabase() : null;
    const db = one ? createDb({ databaseUrl: one.url, dataDir: '', dbPoolMax: 1 }) : t.db;
    await db('dm_groups').insert({ huddle_hash: 'taken', group_size: 1 });
    await expect(
      db.transaction(async (trx) => {
        await trx('dm_groups').insert({ huddle_hash: 'written-first', group_size: 1 });
        // A duplicate key, found only when the held write reaches the server.
        await pipelineWrite(trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['taken', 1]);
      }),
    ).rejects.toMatchObject(dialect === 'mysql' ? { errno: 1062 } : { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(await hashes(db)).toEqual(['taken']);
    if (one) {
      const [[row]] = (await db.raw('SELECT @@in_transaction AS open')) as [[{ open: number }]];
      expect(row.open).toBe(0);
      await db.destroy();
      await one.drop();
    }
  });

  it('names a new row by its session variable only while no later held insert has set it; an earlier one is sent and named by its value', async () => {
    const s = await startTestServer(dialect);
    try {
      const channel = await createChannel(s, 'two held', [s.cast.owner]);
      const row = (content: string): NewMessageRow => ({
        realm_id: s.realmId,
        sender_id: s.cast.owner.id,
        recipient_id: channel.recipient_id,
        type: 1,
        topic: 'two held',
        topic_key: 'two held',
        content,
        rendered_content: `<p>${content}</p>`,
        rendered_content_version: 1,
        date_sent: Math.floor(Date.now() / 1000),
        sending_client: 'test',
        is_me_message: false,
        has_link: false,
        has_image: false,
        has_attachment: false,
      });
      const { result, sent } = await packets(s.ctx.db, () =>
        inTransaction(s.ctx.db, async (tx) => {
          // No read in between: on MySQL both inserts are held, and the variable holds the second's id.
          const first = await insertMessage(tx.trx, row('the first'));
          const second = await insertMessage(tx.trx, row('the second'));
          await insertSearchRows(tx.trx, [['namedafter', first]]);
          return [first, second];
        }),
      );
      const [first, second] = result.map((id) => id.committed());
      expect(second).toBeGreaterThan(first!);
      expect(await s.ctx.db('message_search_terms').where('term', 'namedafter').pluck('message_id')).toEqual([first]);
      // Each insert's own search rows, written right after it, name it.
      const named = (term: string) =>
        s.ctx.db('message_search_terms').where('term', term).whereIn('message_id', [first!, second!]).pluck('message_id');
      expect([await named('first'), await named('second')]).toEqual([[first], [second]]);
      if (dialect === 'mysql') {
        const statements = sent.flatMap((q) => q.split(';\n'));
        // By the variable right after each insert; by a bound value once another insert has set it.
        expect(
          statements.filter((q) => q.startsWith('INSERT IGNORE INTO message_search_terms')).map((q) => q.includes('@parley_message_id')),
        ).toEqual([true, true, false]);
        // Naming the first cost one round trip: the held inserts went out before COMMIT's packet.
        expect(sent.filter((q) => q.startsWith('BEGIN;'))).toHaveLength(1);
        expect(sent).toHaveLength(2);
      }
    } finally {
      s.ctx.queues.close();
      await s.close();
    }
  });

  if (dialect !== 'mysql') return;

  it('writes user_messages rows as integer literals on MySQL (SQLite keeps placeholders, prepared once), and refuses a value that is not a safe integer', async () => {
    const s = await startTestServer('mysql');
    try {
      await createChannel(s, 'literals', [s.cast.owner, s.cast.member]);
      const { result: res, sent } = await packets(s.ctx.db, () =>
        s.api.post('/messages', s.cast.owner, { type: 'stream', to: 'literals', topic: 't', content: 'literal rows' }),
      );
      const id = res.body.id as number;
      const [low, high] = [s.cast.owner.id, s.cast.member.id].sort((a, b) => a - b);
      // On MySQL the statement shares its packet with others (`;\n` between them).
      const insert = sent.flatMap((q) => q.split(';\n')).find((q) => q.startsWith('INSERT INTO user_messages'));
      const stored = await s.ctx.db('user_messages').where('message_id', id).orderBy('user_id').select('user_id', 'flags');
      expect(stored.map((r) => r.user_id)).toEqual([low, high]);
      // The rows in the order the subscribers were read (no ORDER BY): compared as a set.
      const [head, values] = insert!.split(' VALUES ');
      expect(head).toBe('INSERT INTO user_messages (user_id, message_id, flags)');
      expect(
        values!
          .split('),(')
          .map((v) => v.replace(/[()]/g, ''))
          .sort(),
      ).toEqual(stored.map((r) => `${r.user_id},@parley_message_id,${r.flags}`).sort());
      for (const bad of ['1),(2,3,4', 1.5, Number.NaN, 2 ** 60]) {
        await expect(
          inTransaction(s.ctx.db, (tx) =>
            insertUserMessages(tx.trx, id, [
              { userId: s.cast.admin.id, flags: 0 },
              { userId: bad as number, flags: 0 },
            ]),
          ),
        ).rejects.toThrow('Not an integer');
      }
      expect(await s.ctx.db('user_messages').where('message_id', id).orderBy('user_id').pluck('user_id')).toEqual([low, high]);
    } finally {
      s.ctx.queues.close();
      await s.close();
    }
  });

  it('runs on the knex whose transaction internals src/db/mysql copies (re-check _onAcquire, makeTxClient and makeKnex before moving it)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect((require('knex/package.json') as { version: string }).version).toBe('3.3.0');
  });

  it('sends BEGIN in the packet of its first statement and held writes in the packet of COMMIT', async () => {
    const { result, sent } = await packets(t.db, () =>
      inTransaction(t.db, async (tx) => {
        const [id] = await tx.trx('dm_groups').insert({ huddle_hash: 'first', group_size: 1 });
        await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['second', 2]);
        return id;
      }),
    );
    expect(sent.map((s) => s.split(';\n').map((x) => x.split(' ')[0]!.toUpperCase()))).toEqual([
      ['BEGIN', 'INSERT'],
      ['INSERT', 'COMMIT;'],
    ]);
    // The insert's id is its own statement's, not BEGIN's result.
    expect(await t.db('dm_groups').where('huddle_hash', 'first').first('id')).toEqual({ id: result });
    expect(await hashes(t.db)).toEqual(['first', 'second']);
  });

  it('gives a statement that carries held writes its own result', async () => {
    const rows = await inTransaction(t.db, async (tx) => {
      await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['x', 7]);
      return tx.trx('dm_groups').select('huddle_hash', 'group_size');
    });
    expect(rows).toEqual([{ huddle_hash: 'x', group_size: 7 }]);
  });

  it('sends nothing for a transaction that runs no statement, whether it commits or throws', async () => {
    const committed = await packets(t.db, () => inTransaction(t.db, async () => 'nothing to do'));
    const thrown = await packets(t.db, () =>
      inTransaction(t.db, async () => {
        throw new Error('refused by a check');
      }).catch((e: Error) => e.message),
    );
    expect([committed, thrown]).toEqual([
      { result: 'nothing to do', sent: [] },
      { result: 'refused by a check', sent: [] },
    ]);
  });

  it('drops held writes when the transaction rolls back', async () => {
    await expect(
      inTransaction(t.db, async (tx) => {
        await tx.trx('dm_groups').insert({ huddle_hash: 'sent', group_size: 1 });
        await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['held', 1]);
        throw new Error('changed its mind');
      }),
    ).rejects.toThrow('changed its mind');
    expect(await hashes(t.db)).toEqual([]);
  });

  it('sends what it holds before a nested transaction (a savepoint) begins', async () => {
    await t.db.transaction(async (trx) => {
      await pipelineWrite(trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['outer', 1]);
      await trx
        .transaction(async (inner) => {
          await inner('dm_groups').insert({ huddle_hash: 'inner', group_size: 1 });
          throw new Error('inner rolls back');
        })
        .catch(() => undefined);
    });
    expect(await hashes(t.db)).toEqual(['outer']);
  });
  it('fails the outer transaction when a write it held fails as a nested transaction begins, even if the nested error is caught', async () => {
    await t.db('dm_groups').insert({ huddle_hash: 'taken', group_size: 1 });
    await expect(
      t.db.transaction(async (trx) => {
        await trx('dm_groups').insert({ huddle_hash: 'outer', group_size: 1 });
        await pipelineWrite(trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['taken', 1]);
        await trx.transaction(async (inner) => inner('dm_groups').insert({ huddle_hash: 'inner', group_size: 1 })).catch(() => undefined);
      }),
    ).rejects.toMatchObject({ errno: 1062 });
    expect(await hashes(t.db)).toEqual(['taken']);
  });

  it('checks a held write before holding it: as many bindings as placeholders, none undefined', async () => {
    await expect(
      inTransaction(t.db, async (tx) => {
        await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['one', 1, 'spare']);
      }),
    ).rejects.toThrow('A held write has 2 placeholders and 3 bindings');
    await expect(
      inTransaction(t.db, async (tx) => {
        await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['one', undefined]);
      }),
    ).rejects.toThrow('Undefined binding in a held write');
    expect(await hashes(t.db)).toEqual([]);
  });

  it('leaves a held write with identifier placeholders (??) to knex to compile', async () => {
    await inTransaction(t.db, async (tx) => {
      await pipelineWrite(tx.trx, 'INSERT INTO ?? (huddle_hash, group_size) VALUES (?, ?)', ['dm_groups', 'named', 1]);
    });
    expect(await hashes(t.db)).toEqual(['named']);
  });

  it('refuses a write held for a transaction that has ended', async () => {
    const trx = await t.db.transaction();
    await trx('dm_groups').insert({ huddle_hash: 'committed', group_size: 1 });
    await trx.commit();
    await expect(pipelineWrite(trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['late', 1])).rejects.toThrow(
      'A write held for a transaction that has ended',
    );
    expect(await hashes(t.db)).toEqual(['committed']);
  });

  it('sends held writes in a packet of their own once they pass 1 MiB, and stores them all', async () => {
    const rows = Array.from({ length: 9000 }, (_, i) => [`bulk-${String(i).padStart(4, '0')}-${'x'.repeat(50)}`, 1] as const);
    const { sent } = await packets(t.db, () =>
      inTransaction(t.db, async (tx) => {
        for (const r of rows) await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', r);
      }),
    );
    // 9,000 writes of ~130 characters: 1.2 MB, so two packets, the second with COMMIT.
    expect(sent).toHaveLength(2);
    expect(sent[0]!.length).toBeLessThan(1 << 20);
    expect(sent[1]).toMatch(/COMMIT;$/);
    expect(await t.db('dm_groups').count({ n: '*' })).toEqual([{ n: rows.length }]);
  });

  it('leaves an empty statement for knex to refuse, after sending what it holds', async () => {
    await expect(
      inTransaction(t.db, async (tx) => {
        await pipelineWrite(tx.trx, 'INSERT INTO dm_groups (huddle_hash, group_size) VALUES (?, ?)', ['held', 1]);
        await tx.trx.raw('');
      }),
    ).rejects.toThrow();
    expect(await hashes(t.db)).toEqual([]);
  });

  it("hands each transaction a trx built on one shared prototype, which still queries, nests, rolls back, and forwards its client's events", async () => {
    const handles: Knex.Transaction[] = [];
    const seen: string[] = [];
    await t.db.transaction(async (trx) => {
      handles.push(trx);
      trx.on('query', (q: { sql: string }) => seen.push(q.sql));
      await trx('dm_groups').insert({ huddle_hash: 'one', group_size: 1 });
      await trx.transaction(async (inner) => {
        handles.push(inner);
        expect(inner.parentTransaction).toBe(trx);
        await inner.raw('SELECT 1 AS nested');
      });
      // A nested transaction that fails rolls back to its savepoint only.
      await trx
        .transaction(async (inner) => {
          await inner('dm_groups').insert({ huddle_hash: 'undone', group_size: 1 });
          throw new Error('inner fails');
        })
        .catch(() => undefined);
    });
    await t.db.transaction(async (trx) => {
      handles.push(trx);
      expect(trx.isTransaction).toBe(true);
      expect(trx.isCompleted()).toBe(false);
      await trx('dm_groups').insert({ huddle_hash: 'two', group_size: 2 });
    });
    // Rolled back by hand, without a thrown error.
    const manual = await t.db.transaction();
    await manual('dm_groups').insert({ huddle_hash: 'rolled-back', group_size: 3 });
    await manual.rollback();
    // knex's own transactions make a new knex instance per transaction, with a closure of its own per query method.
    expect(handles.some((h) => Object.hasOwn(h, 'select') || Object.hasOwn(h, 'insert'))).toBe(false);
    expect(new Set(handles.map((h) => Object.getPrototypeOf(h) as object)).size).toBe(1);
    expect(Object.getPrototypeOf(handles[0]!)).not.toBe(Function.prototype);
    expect(handles[0]!.isCompleted()).toBe(true);
    expect(manual.isCompleted()).toBe(true);
    // The outer trx hears its own statements and its nested transactions'.
    expect(seen.some((sql) => sql.includes('insert into `dm_groups`'))).toBe(true);
    expect(seen).toContain('SELECT 1 AS nested');
    expect(await hashes(t.db)).toEqual(['one', 'two']);
  });

  it('stores a channel message in one round trip: BEGIN, the message row, its id in a session variable, its other rows (the receivers’ list, then the topic row), COMMIT', async () => {
    const s = await startTestServer('mysql');
    await createChannel(s, 'pipelined', [s.cast.owner, s.cast.member]);
    // The channel's first message also records itself as such (an UPDATE in between): the second is the common case.
    await s.api.post('/messages', s.cast.owner, { type: 'stream', to: 'pipelined', topic: 'trips', content: 'first' });
    const { result: res, sent } = await packets(s.ctx.db, () =>
      s.api.post('/messages', s.cast.owner, { type: 'stream', to: 'pipelined', topic: 'trips', content: 'one round trip' }),
    );
    expect(res.status).toBe(200);
    const transaction = sent.filter((q) => /^BEGIN\b|COMMIT;$/.test(q));
    expect(transaction).toHaveLength(1);
    expect(transaction[0]).toMatch(
      /^BEGIN;\nINSERT INTO messages [^;]*;\nSET @parley_message_id = LAST_INSERT_ID\(\);\nINSERT IGNORE INTO message_search_terms[^;]*;\nINSERT INTO user_messages[^;]*;\nINSERT INTO message_receivers[^;]*;\nINSERT INTO channel_topics [^;]*;\nCOMMIT;$/,
    );
    // The id the client got is the row's: it came back with the packet, from the held insert.
    const id = res.body.id as number;
    expect(await s.ctx.db('messages').where({ content: 'one round trip' }).pluck('id')).toEqual([id]);
    expect(await s.ctx.db('user_messages').where('message_id', id).orderBy('user_id').pluck('user_id')).toEqual(
      [s.cast.owner.id, s.cast.member.id].sort((a, b) => a - b),
    );
    expect(await s.ctx.db('message_search_terms').where({ message_id: id, term: 'trips' }).pluck('term')).toEqual(['trips']);
    s.ctx.queues.close();
    await s.close();
  });
});
