import { Redis } from 'ioredis';
import type { Delivery, Invalidation } from '../src/events/bus';
import { decodeDelivery, encodeDelivery } from '../src/events/bus-codec';
import { QueueManager } from '../src/events/manager';
import { queueOptions } from './support/queue-options';
import { RedisBus } from '../src/events/redis-bus';
import { until } from './support/clock';
import { redisAvailable, TestRedis } from './support/redis';

const opts = (userId: number) => queueOptions(userId);

/** One "node": a bus and the queue manager on it, wired as src/server.ts wires them. */
interface Node {
  bus: RedisBus;
  queues: QueueManager;
  /** Everything the node's listeners saw, in order. */
  seen: string[];
  invalidations: Invalidation[];
  deliveries: Delivery[];
  invalidating?: boolean;
}

async function startNode(url: string, nodeId: string, key: string, maxLen = 1000): Promise<Node> {
  const bus = new RedisBus({ url, nodeId, key, maxLen, blockMs: 200 });
  const queues = new QueueManager(bus, {}, undefined, nodeId);
  const node: Node = { bus, queues, seen: [], invalidations: [], deliveries: [] };
  bus.subscribe((d) => {
    node.deliveries.push(d);
    node.seen.push(`event ${String(d.event.n)}`);
  });
  bus.onInvalidate((inv) => {
    node.invalidations.push(inv);
    // The publisher's own early application (inside invalidate()) is not the stream's order.
    if (inv.kind === 'messages' && !node.invalidating) node.seen.push(`invalidate ${inv.messageIds.join(',')}`);
  });
  bus.onReset(() => queues.dropAll());
  await bus.start();
  return node;
}

async function stopNode(n: Node): Promise<void> {
  n.queues.close();
  await n.bus.close();
}

describe('the delivery codec', () => {
  it('stores perUser grouped by identical extras, and gives each receiver its own again', () => {
    const userIds = Array.from({ length: 1000 }, (_, i) => i + 1);
    const mentioned = new Set([7, 500]);
    const d: Delivery = {
      event: { type: 'message', n: 1 },
      userIds,
      perUser: (id) => ({ flags: mentioned.has(id) ? ['mentioned'] : [] }),
      publicChannelRealmId: 3,
    };
    const wire = encodeDelivery(d);
    expect(JSON.parse(wire).g).toHaveLength(2);
    expect(wire.length).toBeLessThan(6000);
    const back = decodeDelivery(wire, true);
    expect(back.userIds.slice().sort((a, b) => a - b)).toEqual(userIds);
    expect(back.perUser!(7)).toEqual({ flags: ['mentioned'] });
    expect(back.perUser!(8)).toEqual({ flags: [] });
    expect(back).toMatchObject({ publicChannelRealmId: 3, remote: true, event: { type: 'message', n: 1 } });
    const plain = decodeDelivery(encodeDelivery({ event: { type: 'typing' }, userIds: [4, 5] }), false);
    expect(plain.perUser).toBeUndefined();
    expect(plain.remote).toBeUndefined();
    expect(plain.userIds).toEqual([4, 5]);
  });
});

const withRedis = redisAvailable() ? describe : describe.skip;

withRedis('the Redis event bus (a real redis-server)', () => {
  let redis: TestRedis;
  let admin: Redis;
  let keyN = 0;
  const key = () => `test:events:${++keyN}`;
  const nodes: Node[] = [];
  const node = async (nodeId: string, k: string, maxLen?: number) => {
    const n = await startNode(redis.url, nodeId, k, maxLen);
    nodes.push(n);
    return n;
  };
  beforeAll(async () => {
    redis = await TestRedis.start({ persist: true });
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
  });
  afterEach(async () => {
    for (const n of nodes.splice(0)) await stopNode(n);
  });
  afterAll(async () => {
    admin.disconnect();
    await redis.destroy();
  });

  it('gives two nodes the same order of deliveries and invalidations, the publisher included', async () => {
    const k = key();
    const a = await node('a', k);
    const b = await node('b', k);
    const qa = a.queues.register(opts(1));
    const qb = b.queues.register(opts(1));
    for (let i = 0; i < 40; i++) {
      const from = i % 3 === 0 ? b : a;
      if (i % 5 === 0) {
        from.invalidating = true;
        from.bus.invalidate({ kind: 'messages', messageIds: [i] });
        from.invalidating = false;
        // Applied at once on the publishing node, before any other node hears of it.
        expect(from.invalidations.at(-1)).toEqual({ kind: 'messages', messageIds: [i] });
      }
      from.bus.publish({ event: { type: 'ping', n: i }, userIds: [1] });
    }
    await Promise.all([a.bus.flushed(), b.bus.flushed()]);
    await until(() => a.seen.length === 48 && b.seen.length === 48, 'both nodes read every entry');
    // One order for all: the stream's, not each publisher's own.
    expect(b.seen).toEqual(a.seen);
    expect(a.seen.filter((s) => s.startsWith('event'))).toHaveLength(40);
    // Each invalidation comes before the event that followed it on its node.
    expect(a.seen.indexOf('invalidate 15')).toBeLessThan(a.seen.indexOf('event 15'));
    const events = (q: string, m: QueueManager) => m.poll(1, q, -1, true).then((r) => r.events.map((e) => e.event.n));
    expect(await events(qa.id, a.queues)).toEqual(await events(qb.id, b.queues));
    // The other node's deliveries are marked remote (push notifications are sent once, by the publisher).
    expect(a.deliveries.filter((d) => d.remote).map((d) => d.event.n)).toEqual(b.deliveries.filter((d) => !d.remote).map((d) => d.event.n));
  });

  it('answers a request only once its events are in Redis', async () => {
    const k = key();
    const a = await node('a', k);
    for (let i = 0; i < 200; i++) a.bus.publish({ event: { type: 'ping', n: i }, userIds: [1] });
    await a.bus.flushed();
    // Node start marker + 200 deliveries, all there the moment flushed() resolves.
    expect(await admin.xlen(k)).toBe(201);
  });

  it('drops the queues of a node whose position was trimmed away, and empties its caches', async () => {
    const k = key();
    const a = await node('a', k);
    const b = await node('b', k);
    const qb = b.queues.register(opts(1));
    a.bus.publish({ event: { type: 'ping', n: 1 }, userIds: [1] });
    await until(() => b.seen.length === 1, 'b reads the first event');
    expect(b.bus.stats.resets).toBe(0);
    // As if b had stopped reading while the stream moved on past REDIS_STREAM_MAXLEN.
    await admin.xtrim(k, 'MAXLEN', 0);
    a.bus.publish({ event: { type: 'ping', n: 2 }, userIds: [1] });
    await until(() => b.bus.stats.resets === 1, 'b notices its place is gone');
    expect(() => b.queues.access(1, qb.id)).toThrow(expect.objectContaining({ code: 'BAD_EVENT_QUEUE_ID' }));
    expect(b.invalidations).toContainEqual({ kind: 'all' });
    // The trim took a's place too (every entry): it started over as well.
    await until(() => a.bus.stats.resets === 1, 'a notices too');
    // b goes on from the newest entry: a queue registered now gets what follows.
    const again = b.queues.register(opts(1));
    a.bus.publish({ event: { type: 'ping', n: 3 }, userIds: [1] });
    await until(() => b.seen.includes('event 3'), 'b reads on');
    expect((await b.queues.poll(1, again.id, -1, true)).events.map((e) => e.event.n)).toEqual([3]);
  });

  it('keeps committing while Redis is down, and delivers in order once it is back', async () => {
    const k = key();
    const a = await node('a', k);
    const b = await node('b', k);
    const qb = b.queues.register(opts(1));
    a.bus.publish({ event: { type: 'ping', n: 1 }, userIds: [1] });
    await until(() => b.seen.length === 1, 'b reads the first event');
    await redis.stop();
    for (let n = 2; n <= 4; n++) a.bus.publish({ event: { type: 'ping', n }, userIds: [1] });
    // A request made now is answered without Redis (its events wait in the client): at once once the
    // client has seen the connection drop, after at most FLUSH_WAIT_MS (2 s) before it has.
    const t0 = Date.now();
    await a.bus.flushed();
    expect(Date.now() - t0).toBeLessThan(3000);
    await new Promise((r) => setTimeout(r, 300));
    expect(b.seen).toEqual(['event 1']);
    await redis.start();
    await until(() => b.seen.length === 4, 'b reads what was published while Redis was down', 15_000);
    expect(b.seen).toEqual(['event 1', 'event 2', 'event 3', 'event 4']);
    // The append-only file kept the stream: b's place survived, so its queue did too.
    expect(b.bus.stats.resets).toBe(0);
    expect((await b.queues.poll(1, qb.id, -1, true)).events.map((e) => e.event.n)).toEqual([1, 2, 3, 4]);
  });

  it('starts over when appends were dropped while Redis was away: every node drops its queues', async () => {
    const k = key();
    const a = new RedisBus({ url: redis.url, nodeId: 'a', key: k, maxLen: 1000, blockMs: 200, maxPending: 2 });
    const b = await node('b', k);
    await a.start();
    const qb = b.queues.register(opts(1));
    await redis.stop();
    for (let n = 1; n <= 5; n++) a.publish({ event: { type: 'ping', n }, userIds: [1] });
    await redis.start();
    await until(() => b.bus.stats.resets === 1, 'the reset entry reaches b', 15_000);
    expect(() => b.queues.access(1, qb.id)).toThrow(expect.objectContaining({ code: 'BAD_EVENT_QUEUE_ID' }));
    // Two were kept (maxPending) and delivered; the rest were dropped.
    expect(b.seen).toEqual(['event 1', 'event 2']);
    await a.close();
  });
});
