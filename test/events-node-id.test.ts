import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';

/**
 * NODE_ID (docs/deployment.md): every queue id carries its node, and a
 * node answers a queue of another node at once with BAD_EVENT_QUEUE_ID
 * (the client registers again), never with a wait.
 */
eachDatabase('queue ids of a named node', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { config: { nodeId: 'p1' } });
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  it('prefixes every queue id with the node', async () => {
    const reg = await t.api.call('post', '/register', t.cast.member, { event_types: '["message"]' });
    expect(reg.status).toBe(200);
    expect(reg.body.queue_id).toMatch(/^p1:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const poll = await t.api.call(
      'get',
      '/events',
      t.cast.member,
      {},
      {
        query: { queue_id: reg.body.queue_id, last_event_id: -1, dont_block: true },
      },
    );
    expect(poll.status).toBe(200);
    const gone = await t.api.call('delete', '/events', t.cast.member, { queue_id: reg.body.queue_id });
    expect(gone.status).toBe(200);
  });

  it("answers another node's queue id with BAD_EVENT_QUEUE_ID at once, for GET and DELETE", async () => {
    const reg = await t.api.call('post', '/register', t.cast.member, { event_types: '["message"]' });
    const elsewhere = String(reg.body.queue_id).replace(/^p1:/, 'p2:');
    // No dont_block: a queue this node held would make the poll wait (the test would time out).
    const poll = await t.api.call('get', '/events', t.cast.member, {}, { query: { queue_id: elsewhere, last_event_id: -1 } });
    expect(poll.status).toBe(400);
    expect(poll.body).toMatchObject({ code: 'BAD_EVENT_QUEUE_ID', queue_id: elsewhere, msg: `Bad event queue ID: ${elsewhere}` });
    const del = await t.api.call('delete', '/events', t.cast.member, { queue_id: elsewhere });
    expect(del.status).toBe(400);
    expect(del.body).toMatchObject({ code: 'BAD_EVENT_QUEUE_ID', queue_id: elsewhere });
  });
});
