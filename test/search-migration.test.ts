import * as m021 from '../src/db/migrations/021_search_terms';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';

/** Migration 021 indexes the messages that exist when it runs, exactly as sending would have. */
eachDatabase('migration 021 (search rows for existing messages)', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    await createChannel(t, 'history', [t.cast.owner, t.cast.member]);
  });
  afterAll(() => t.close());

  const rows = async () =>
    (await t.ctx.db('message_search_terms').orderBy(['message_id', 'term']).select('term', 'message_id')).map(
      (r: { term: string; message_id: number }) => `${r.message_id}:${r.term}`,
    );

  it('rebuilds the rows sending wrote, and search answers from them', async () => {
    const ids: number[] = [];
    for (const [topic, content] of [
      ['Launch plans', 'The **deployment** is on Friday'],
      ['launch plans', 'Déjà vu: snake_case and CamelCase'],
      ['other', 'nothing about it'],
    ]) {
      const res = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'history', topic, content });
      ids.push(res.body.id);
    }
    const written = await rows();
    expect(written).toContain(`${ids[0]}:deployment`);
    expect(written).toContain(`${ids[1]}:deja`);

    await m021.down(t.ctx.db);
    await m021.up(t.ctx.db);
    expect(await rows()).toEqual(written);

    const res = await t.api.get('/messages', t.cast.member, {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'search', operand: 'launch' }],
    });
    expect(res.body.messages.map((m: { id: number }) => m.id)).toEqual([ids[0], ids[1]]);
  });
});
