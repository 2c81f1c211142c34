import { eachDatabase } from './support/databases';
import { createChannel, createMembers, startTestServer, type TestServer } from './support/server';
import type { UserRow } from '../src/queries/rows';

/**
 * Writes of more than 500 rows in one request: knex writes a multi-row
 * INSERT for SQLite as one compound SELECT, which SQLite caps at 500 terms,
 * so every bulk insert is sliced (src/queries/ids.ts insertRows).
 */
eachDatabase('bulk writes', (dialect) => {
  let t: TestServer;
  let many: UserRow[];
  beforeAll(async () => {
    t = await startTestServer(dialect);
    many = await createMembers(t, 'bulk', 600);
  }, 120_000);
  afterAll(() => t.close());

  it('stores an anonymous permission group of 600 direct members', async () => {
    const res = await t.api.post('/channels/create', t.cast.owner, {
      name: 'many-movers',
      subscribers: [t.cast.owner.id],
      can_add_subscribers_group: { direct_members: many.map((u) => u.id), direct_subgroups: [] },
    });
    expect(res.status).toBe(200);
    const channel = await t.ctx.db('channels').where({ id: res.body.id }).first('can_add_subscribers_group');
    const members = await t.ctx.db('group_members').where({ group_id: channel!.can_add_subscribers_group }).count({ n: '*' });
    expect(Number(members[0]!.n)).toBe(600);
  });

  it('starts a direct message conversation with 600 recipients', async () => {
    const res = await t.api.post('/messages', t.cast.owner, { type: 'direct', to: many.map((u) => u.id), content: 'hello, everyone' });
    expect(res.status).toBe(200);
    const rows = await t.ctx.db('user_messages').where({ message_id: res.body.id }).count({ n: '*' });
    expect(Number(rows[0]!.n)).toBe(601);
  });

  it('stars 600 messages read as channel history in one request', async () => {
    await createChannel(t, 'history', [t.cast.owner]);
    const ids: number[] = [];
    for (let i = 0; i < 600; i++) {
      const sent = await t.api.post('/messages', t.cast.owner, { type: 'stream', to: 'history', topic: 't', content: `m${i}` });
      ids.push(sent.body.id);
    }
    const res = await t.api.post('/messages/flags', t.cast.member, { messages: ids, op: 'add', flag: 'starred' });
    expect(res.status).toBe(200);
    const rows = await t.ctx.db('user_messages').where({ user_id: t.cast.member.id }).whereIn('message_id', ids).count({ n: '*' });
    expect(Number(rows[0]!.n)).toBe(600);
  }, 120_000);
});
