import { Redis } from 'ioredis';
import { QueueManager } from '../src/events/manager';
import { queueOptions } from './support/queue-options';
import { RedisBus } from '../src/events/redis-bus';
import { until } from './support/clock';
import { eachDatabase } from './support/databases';
import { redisAvailable, TestRedis } from './support/redis';
import { createChannel, startTestServer, TestServer } from './support/server';

const haveRedis = redisAvailable();

/**
 * The server on the Redis bus (EVENT_BUS=redis), beside a second "node"
 * (a bus and queues of its own on the same stream): a message sent over
 * HTTP is in Redis when the answer comes, and reaches queues on both nodes,
 * each receiver with its own flags.
 */
eachDatabase('events through Redis, over the API', (dialect) => {
  if (!haveRedis) {
    it.skip('needs redis-server', () => undefined);
    return;
  }
  let redis: TestRedis;
  let admin: Redis;
  let busA: RedisBus;
  let busB: RedisBus;
  let nodeB: QueueManager;
  let t: TestServer;
  const key = `test:http:${dialect}`;
  beforeAll(async () => {
    redis = await TestRedis.start();
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    busA = new RedisBus({ url: redis.url, nodeId: 'a', key, maxLen: 1000, blockMs: 200 });
    busB = new RedisBus({ url: redis.url, nodeId: 'b', key, maxLen: 1000, blockMs: 200 });
    t = await startTestServer(dialect, undefined, { bus: busA, config: { nodeId: 'a' } });
    nodeB = new QueueManager(busB, {}, undefined, 'b');
    await busA.start();
    await busB.start();
    await createChannel(t, 'general', [t.cast.owner, t.cast.member]);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    nodeB.close();
    await busA.close();
    await busB.close();
    admin.disconnect();
    await t.close();
    await redis.destroy();
  });

  it('answers a send once its event is in Redis, and both nodes deliver it', async () => {
    const { owner, member } = t.cast;
    const reg = await t.api.call('post', '/register', owner, { event_types: '["message"]' });
    expect(reg.body.queue_id).toMatch(/^a:/);
    const onB = nodeB.register(queueOptions(member.id, { realmId: t.realmId, eventTypes: new Set(['message']) }));
    // Redis holds every write for 300 ms: an answer that did not wait for its XADD would come first.
    await admin.call('CLIENT', 'PAUSE', '300', 'WRITE');
    const sent = await t.api.call('post', '/messages', owner, {
      type: 'stream',
      to: 'general',
      topic: 'nodes',
      content: 'hi @**Test Member**',
    });
    expect(sent.status).toBe(200);
    // Already in the stream when the answer came: read straight from Redis.
    const entries = await admin.xrange(key, '-', '+');
    const payloads = entries.map(([, fields]) => fields[fields.indexOf('p') + 1] ?? '');
    expect(payloads.some((p) => p.includes('"type":"message"') && p.includes(`"id":${sent.body.id}`))).toBe(true);

    await until(() => nodeB.access(member.id, onB.id).events.length === 1, 'node b delivers the message');
    const [onBEvent] = nodeB.access(member.id, onB.id).events;
    expect(onBEvent!.event).toMatchObject({ type: 'message', message: { id: sent.body.id } });
    expect(onBEvent!.extra).toEqual({ flags: ['mentioned'] });
    await until(() => t.ctx.queues.access(owner.id, reg.body.queue_id as string).events.length === 1, 'node a delivers it too');
    const poll = await t.api.call('get', '/events', owner, {}, { query: { queue_id: reg.body.queue_id, last_event_id: -1 } });
    expect(poll.body.events).toEqual([
      expect.objectContaining({ type: 'message', message: expect.objectContaining({ id: sent.body.id }) }),
    ]);
  });
});
